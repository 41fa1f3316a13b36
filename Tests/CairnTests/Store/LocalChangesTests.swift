import CairnProtocol
import Foundation
import GRDB
import Testing

@testable import Cairn

/// "This record has local changes" is one rule (``LocalChanges``): every path that must not lose a local change asks
/// it, and the traces that follow it (the row's pending flag, the shadow) are never read in its place.
@Suite("Store: the one rule of local changes")
struct LocalChangesTests {
    /// How the record `n-1` holds its local change when a path runs.
    enum Form: String, CaseIterable, CustomTestStringConvertible {
        /// A change waits in the upload queue.
        case queued
        /// The server rejected the change: it is kept as a failed upload, and nothing is queued.
        case failed
        /// Nothing is queued or failed, yet the traces say otherwise: the row's pending flag is set and the shadow is
        /// there. A path that reads a trace in place of the rule keeps what it should not.
        case staleTraces

        var testDescription: String { rawValue }

        /// What the rule says.
        var hasLocalChanges: Bool { self != .staleTraces }
    }

    /// Every path that must keep a record with local changes.
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        /// A pulled newer state of the record.
        case pullWriter
        /// The acknowledgement of an upload of the record while it has another change.
        case acknowledgement
        /// A pulled tombstone, written straight by the row writer (`deleteSynced`).
        case deleteSynced
        /// A fresh snapshot that does not list the record (`deleteUnlisted`).
        case deleteUnlisted
        /// The record leaves its only download query.
        case downloadQueryEviction
        /// A partial collection's sweep of the records no query holds.
        case downloadQuerySweep

        var testDescription: String { rawValue }
    }

    static let local: [String: JSONValue] = ["title": "A", "count": 1]

    @Test("every path keeps a record exactly when the rule says it has local changes", arguments: Path.allCases, Form.allCases)
    func pathFollowsRule(path: Path, form: Form) throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])])
        if path == .acknowledgement {
            try acknowledge(test, form: form)
            return
        }
        if path == .downloadQueryEviction || path == .downloadQuerySweep {
            let queries = DownloadQueryStore(store: test.store)
            try queries.create(name: "q", collection: "notes", filter: .condition("title", .eq, "A"))
            try pullQuery(test, #"[{"id":"n-1","version":1,"data":{"title":"A"}}]"#)
        }
        try hold(test, form: form)

        switch path {
        case .pullWriter:
            try test.pull([.init(id: "n-1", version: 2, data: ["title": "B"])], cursor: "c2")
            #expect(try test.record("n-1")?.data == (form.hasLocalChanges ? Self.local : ["title": "B"]))
            return
        case .acknowledgement:
            return
        case .deleteSynced:
            let table = try test.store.table("notes")
            try test.store.writer.write { db in try table.pulledRowWriter(db).write(ScannedChange(id: "n-1", version: 2, removed: true)) }
        case .deleteUnlisted:
            try test.store.pullStates.beginResync("notes")
            try test.pull([.init(id: "n-2", version: 1, data: ["title": "B"])], cursor: "c2")
        case .downloadQueryEviction:
            try pullQuery(test, #"[{"id":"n-1","version":2,"gone":true}]"#)
        case .downloadQuerySweep:
            try test.store.writer.write { db in _ = try test.store.downloadQueries.removeMembers(db, query: "q") }
            try DownloadQueryStore(store: test.store).finishPull("notes")
        }
        // The row stays exactly when the record has local changes.
        #expect(try (test.record("n-1") != nil) == form.hasLocalChanges)
    }

    @Test("the pending flag and the shadow follow the rule through writes, answers, pulls, retries and discards")
    func tracesFollowRule() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"]), .init(id: "n-2", version: 1, data: ["title": "B"])])
        try expectTracesFollowRule(test)
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
        try test.store.write(collection: "notes", id: "n-3", change: .create(["title": "C"]))
        try expectTracesFollowRule(test)
        try test.push { $0.recordID == "n-1" ? TestStore.rejected($0) : TestStore.applied($0, version: 1) }
        try expectTracesFollowRule(test)
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 2]))
        try test.store.write(collection: "notes", id: "n-2", change: .delete)
        try test.pull([.init(id: "n-1", version: 2, data: ["title": "A2"]), .init(id: "n-2", version: 2, data: ["title": "B2"])], cursor: "c2")
        try expectTracesFollowRule(test)
        try test.push { TestStore.applied($0, version: 3) }
        try expectTracesFollowRule(test)
        let failed = try #require(try test.store.uploads.failedOperations().first)
        try test.store.uploads.retryFailed(id: failed.id, data: nil)
        try expectTracesFollowRule(test)
        try test.push { TestStore.rejected($0) }
        try test.store.uploads.discardFailed(id: try #require(try test.store.uploads.failedOperations().first).id)
        try expectTracesFollowRule(test)
        try test.store.write(collection: "notes", id: "n-3", change: .patch(["count": 4]))
        try test.store.uploads.undoChanges(collection: "notes", ids: ["n-3"])
        try expectTracesFollowRule(test)
    }

    // MARK: Setting up

    /// Gives `n-1` (pulled at version 1) the local change `count: 1`, held as `form` says.
    private func hold(_ test: TestStore, form: Form) throws {
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
        switch form {
        case .queued:
            break
        case .failed:
            try test.push { TestStore.rejected($0) }
        case .staleTraces:
            try test.store.writer.write { db in try db.execute(sql: "DELETE FROM cairn_queue") }
        }
        #expect(try test.record("n-1")?.hasPendingChanges == true)
        #expect(try test.shadow("n-1") != nil)
    }

    /// An upload of `n-1` is applied while the record holds another change as `form` says (with stale traces: none).
    private func acknowledge(_ test: TestStore, form: Form) throws {
        let inFlight: [PendingOperation]
        switch form {
        case .queued:
            try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 2]))
            inFlight = try test.store.uploads.takeBatch(limit: 10)
            try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
        case .failed:
            try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 2]))
            try test.push { TestStore.rejected($0) }
            try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
            inFlight = try test.store.uploads.takeBatch(limit: 10)
        case .staleTraces:
            try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
            inFlight = try test.store.uploads.takeBatch(limit: 10)
        }
        #expect(inFlight.count == 1)
        _ = try test.store.uploads.recordAnswers(inFlight.map { TestStore.applied($0, version: 2, data: ["title": "A", "count": 2]) }, for: inFlight)
        let record = try #require(try test.record("n-1"))
        #expect(record.hasPendingChanges == form.hasLocalChanges)
        #expect(record.data == (form.hasLocalChanges ? Self.local : ["title": "A", "count": 2]))
        #expect(try (test.shadow("n-1") != nil) == form.hasLocalChanges)
    }

    /// Applies a page of the download query `q` of `notes` holding `changes` (a JSON array).
    private func pullQuery(_ test: TestStore, _ changes: String) throws {
        let body = #"{"changes":\#(changes),"cursor":"q1","hasMore":false}"#
        _ = try test.store.apply(try test.store.scan(Data(body.utf8), collection: "notes"),
                                 to: .query(name: "q", collection: "notes", phase: .main(snapshot: false)))
    }

    /// For every record of `notes`: its row's pending flag, and whether it has a shadow, are what the rule says.
    private func expectTracesFollowRule(_ test: TestStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try test.store.writer.read { db in
            let ids = try String.fetchAll(db, sql: "SELECT id FROM notes UNION SELECT record_id FROM cairn_shadow WHERE collection = 'notes'")
            let changed = try LocalChanges.ids(db, collection: "notes", among: ids)
            for id in ids {
                let flag = try Bool.fetchOne(db, sql: "SELECT cairn_pending FROM notes WHERE id = ?", arguments: [id])
                let shadow = try test.store.shadows.shadow(db, collection: "notes", id: id)
                #expect(flag == nil || flag == changed.contains(id), "the pending flag of \(id)", sourceLocation: sourceLocation)
                #expect((shadow != nil) == changed.contains(id), "the shadow of \(id)", sourceLocation: sourceLocation)
            }
        }
    }
}
