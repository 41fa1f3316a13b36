import CairnProtocol
import Synchronization

/// The sync layer's view of a project's schema history: loads it once per current schema number and hands out
/// ``SchemaTranslator``s for the schema number a request names (`Cairn-Schema-Version`, `426 upgrade_required` below
/// the window). Shared by the server's routes, its batches and its feed.
///
/// ```swift
/// let translator = try await evolution.translator(project: "field", current: schema, requested: 2)
/// ```
public final class SchemaEvolution: Sendable {
    let storage: any ServerStorage
    private let cache = Mutex<[String: SchemaHistory]>([:])

    /// An evolution over `storage`'s stored schema versions.
    public init(storage: any ServerStorage) { self.storage = storage }

    /// The history of `project` whose current schema is `current`: read from storage when the current number or
    /// minimum changed since it was last read, or a migration was still running then.
    func history(project: String, current: Schema) async throws -> SchemaHistory {
        if let cached = cache.withLock({ $0[project] }), cached.current.version == current.version, cached.current.number == current.number,
            cached.current.minimumSchemaVersion == current.minimumSchemaVersion
        {
            return cached
        }
        let history = SchemaHistory(current: current, versions: try await storage.schemaVersions(project: project))
        cache.withLock { $0[project] = history }
        return history
    }

    /// Forgets what was read of `project` (its migration's progress changed).
    func forget(project: String) { _ = cache.withLock { $0.removeValue(forKey: project) } }

    /// The translator for a request naming schema `requested` (`nil`: the current one); `426 upgrade_required` below
    /// the project's minimum.
    func translator(project: String, current: Schema, requested: Int?) async throws -> SchemaTranslator {
        try await history(project: project, current: current).translator(for: requested)
    }

    /// The schema number a request names in `Cairn-Schema-Version`; `validation_failed` for a value that is not one.
    static func requestedNumber(_ header: String?) throws(ErrorBody) -> Int? {
        guard let header else { return nil }
        guard let number = Int(header), number >= 0 else {
            throw .validation("\(CairnHeader.schemaVersion) must be a schema number (0 or more)", field: CairnHeader.schemaVersion)
        }
        return number
    }
}
