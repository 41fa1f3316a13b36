import CairnProtocol
import Foundation
import Synchronization

/// The sync layer's view of a project's schema history: loads it once per current schema number and hands out
/// ``SchemaTranslator``s for the schema number a request names (`Cairn-Schema-Version`, `426 upgrade_required` below
/// the window). Shared by the server's routes, its batches and its feed.
///
/// ```swift
/// let translator = try await evolution.translator(project: "field", current: schema, requested: 2)
/// ```
final class SchemaEvolution: Sendable {
    let storage: any ServerStorage
    /// When a history was read, to read again one whose migration was still running then.
    let clock: any WallClock
    private let cache = Mutex<[String: (history: SchemaHistory, readAt: Date)]>([:])

    /// How long a history read while a migration ran is trusted: another process (another instance, `cairn admin`)
    /// may finish the migration, after which reads need not bring records to the new shape any more.
    static let pendingFreshness: TimeInterval = 5

    /// An evolution over `storage`'s stored schema versions.
    init(storage: any ServerStorage, clock: any WallClock = SystemWallClock()) {
        self.storage = storage
        self.clock = clock
    }

    /// The history of `project` whose current schema is `current`: read from storage when the current schema changed
    /// since it was last read, or when a migration was still running then and a few seconds passed.
    func history(project: String, current: Schema) async throws -> SchemaHistory {
        let now = clock.now()
        if let cached = cache.withLock({ $0[project] }), cached.history.current.version == current.version,
            cached.history.current.number == current.number, cached.history.current.minimumSchemaVersion == current.minimumSchemaVersion,
            cached.history.pendingSteps.isEmpty || now.timeIntervalSince(cached.readAt) < Self.pendingFreshness
        {
            return cached.history
        }
        let history = SchemaHistory(current: current, versions: try await storage.schemaVersions(project: project))
        cache.withLock { $0[project] = (history, now) }
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
        guard (1...9).contains(header.utf8.count), header.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let number = Int(header)
        else {
            throw .validation("\(CairnHeader.schemaVersion) must be a schema number (1 to 9 digits)", field: CairnHeader.schemaVersion)
        }
        return number
    }
}
