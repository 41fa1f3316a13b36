import CairnProtocol

/// Decides which live notices one listener receives: under data rules, a notice of a collection reaches a reader
/// only when a record it may read changed since its last notice of that collection, so a notice never tells of a
/// record the reader cannot read. Readers not bound by rules receive every notice.
///
/// ```swift
/// var filter = try await NoticeFilter(access: access, caller: caller)
/// for await notice in stream where await filter.admits(notice) { ... }
/// ```
struct NoticeFilter {
    let access: AccessControl
    let caller: ProjectAccess
    /// Per collection, the version up to which changes were considered.
    private var considered: [String: Int64] = [:]
    /// The project's head version when the listener subscribed.
    private let startHead: Int64

    /// A filter for `caller`, starting at the project's current head version.
    init(access: AccessControl, caller: ProjectAccess) async throws {
        self.access = access
        self.caller = caller
        let schema = try await access.schema(caller)
        if caller.role != .admin, let collection = schema.collections.first(where: { $0.rules != nil }) {
            startHead = try await access.storage.feedRange(
                project: caller.project, collection: collection, since: Int64.max - 1, snapshotHigh: nil, limit: 1, filter: nil
            ).head
        } else {
            startHead = 0
        }
    }

    /// Whether the listener receives `notice`. A failure to check withholds the notice: the client still pulls on
    /// its schedule.
    mutating func admits(_ notice: ChangeNotice) async -> Bool {
        guard let schema = try? await access.schema(caller), let collection = schema.collection(named: notice.collection) else { return true }
        guard let scope = try? await access.scope(caller, collection), let read = scope.read else { return true }
        let since = considered[notice.collection] ?? startHead
        guard notice.version > since else { return false }
        considered[notice.collection] = notice.version
        var cursor = since
        while cursor < notice.version {
            guard let rows = try? await access.storage.feedRange(
                project: caller.project, collection: collection, since: cursor, snapshotHigh: nil, limit: 500, filter: read)
            else { return false }
            for row in rows.rows where row.version <= notice.version {
                if !row.deleted && row.matchesFilter { return true }
            }
            guard rows.hasMore, let last = rows.rows.last?.version else { return false }
            cursor = last
        }
        return false
    }
}
