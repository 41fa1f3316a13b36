import CairnProtocol

/// Decides which live notices one listener receives: under data rules, a notice of a collection reaches a reader
/// only when a record it may read changed since its last notice of that collection, so a notice never tells of a
/// record the reader cannot read. Readers not bound by rules receive every notice. The listener's role is read again
/// for each notice: a member who lost the project hears nothing more, one who lost `admin` is bound from then on.
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
        startHead = try await access.storage.headVersion(project: caller.project, schema: try await access.schema(caller))
    }

    /// Whether the listener receives `notice`. A failure to check withholds the notice: the client still pulls on
    /// its schedule.
    mutating func admits(_ notice: ChangeNotice) async -> Bool {
        let since = considered[notice.collection] ?? startHead
        guard notice.version > since else { return false }
        // The listener's access now, as a request of its own would get it.
        guard let member = try? await access.current(caller.identity, in: caller.project) else { return false }
        guard member.isBound else { return true }
        guard let schema = try? await access.schema(member), let collection = schema.collection(named: notice.collection),
            let scope = try? await access.scope(member, collection)
        else { return false }
        guard let read = scope.read else { return true }
        var cursor = since
        while cursor < notice.version {
            guard let rows = try? await access.storage.feedRange(
                project: caller.project, collection: collection, since: cursor, snapshotHigh: nil, limit: 500, filter: read)
            else { return false }
            if rows.rows.contains(where: { $0.version <= notice.version && !$0.deleted && $0.matchesFilter }) {
                considered[notice.collection] = notice.version
                return true
            }
            guard rows.hasMore, let last = rows.rows.last?.version else { break }
            cursor = last
        }
        considered[notice.collection] = notice.version
        return false
    }
}
