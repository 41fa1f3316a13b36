import CairnProtocol
import Foundation

extension CairnClient {
    /// Uploads the queued changes of these upload groups only (SAP's `upload(groups:)`), in queue order within them;
    /// no other change, action call or file deletion goes. A held group is not uploaded, named or not.
    ///
    /// ```swift
    /// try client.save("findings", id: "f-1", data: ["severity": 2], options: WriteOptions(uploadGroup: "visit-118"))
    /// try await client.push(groups: ["visit-118"])
    /// ```
    ///
    /// A change made on top of a change of another group (the same record) waits for that one: push both groups.
    @discardableResult
    public func push(groups: Set<String>) async throws -> SyncSummary {
        try checkOpen()
        let summary = try await engine.run(SyncScope(push: true, pull: false, collections: nil, uploadGroups: groups))
        afterSync(pulled: [])
        return summary
    }

    /// Uploads the queued changes of these upload groups only, then downloads every collection's changes.
    @discardableResult
    public func sync(uploadGroups groups: Set<String>) async throws -> SyncSummary {
        try checkOpen()
        let summary = try await engine.run(SyncScope(push: true, pull: true, collections: nil, uploadGroups: groups))
        afterSync(pulled: nil)
        return summary
    }

    /// Holds an upload group (PingPong's `stash`): its writes stay local and visible, and are not uploaded by
    /// ``sync()``, ``push()``, ``push(groups:)`` or the scheduler until ``release(uploadGroup:)``. Changes written
    /// meanwhile are combined as usual, so the release uploads each record's net change. The store remembers the
    /// hold across relaunches. Holding a group with no writes yet holds the writes to come.
    ///
    /// ```swift
    /// try client.hold(uploadGroup: "draft-report")
    /// try client.save("reports", id: "r-7", data: ["text": "…"], options: WriteOptions(uploadGroup: "draft-report"))
    /// try await client.sync()                          // r-7 stays on the device
    /// try client.release(uploadGroup: "draft-report")  // the next sync uploads it
    /// ```
    ///
    /// - Returns: false when the group was already held.
    @discardableResult
    public func hold(uploadGroup group: String) throws -> Bool {
        try checkOpen()
        try WriteOptions(uploadGroup: group).validate()
        let date = store.now
        return try store.writer.write { db in try store.heldGroups.hold(db, group, at: date) }
    }

    /// Releases a held upload group: its writes are uploaded by the next sync (the scheduler pushes them after its
    /// push delay).
    ///
    /// - Returns: false when the group was not held.
    @discardableResult
    public func release(uploadGroup group: String) throws -> Bool {
        try checkOpen()
        let released = try store.writer.write { db in try store.heldGroups.release(db, group) }
        if released { noteLocalWrite() }
        return released
    }

    /// The upload groups held now, by name.
    public func heldUploadGroups() throws -> [String] {
        try checkOpen()
        return try store.writer.read { db in try store.heldGroups.all(db) }
    }
}
