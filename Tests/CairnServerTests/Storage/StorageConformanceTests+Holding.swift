import CairnProtocol
import CairnServer
import Foundation
import Testing

/// What a reader may hold of a changed record, and how long the states that tell are kept, on every backend.
@Suite("Storage conformance: held records under rules")
struct StorageHoldingConformanceTests {
    typealias F = StorageFixtures
    static let north: Filter = .condition("title", .eq, "north")

    func changes(_ storage: any ServerStorage, since: Int64) async throws -> [String] {
        try await storage.feedRange(
            project: "field", collection: F.notes, since: since, snapshotHigh: nil, limit: 100,
            selection: FeedSelection(filter: Self.north, held: FeedHolding(filter: Self.north, through: since))
        ).rows.map { "\($0.id)\($0.deleted ? " deleted" : $0.matchesFilter ? "" : " gone")" }
    }

    @Test("a change is listed only to readers who may hold the record: through its prior state, or an older one in the history", arguments: StorageBackend.all)
    func held(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            // At version 2 a reader of "north" holds a (north), not b (south).
            try await F.commit([F.row("a", 1, #"{"title":"north"}"#), F.row("b", 2, #"{"title":"south"}"#)], in: storage)
            // a leaves twice (its prior state, v3, is after the reader's copy: the history answers); b changes and
            // stays unreadable; c is created unreadable; d is created readable and deleted; e is created readable.
            try await F.commit([F.row("a", 3, #"{"title":"east"}"#)], in: storage)
            try await F.commit([F.row("a", 4, #"{"title":"west"}"#), F.row("b", 5, #"{"title":"east"}"#)], in: storage)
            try await F.commit([F.row("c", 6, #"{"title":"south"}"#), F.row("d", 7, #"{"title":"north"}"#)], in: storage)
            try await F.commit([F.row("d", 8, deleted: true), F.row("e", 9, #"{"title":"north"}"#)], in: storage)
            #expect(try await changes(storage, since: 2) == ["a gone", "e"])
            // A reader at version 7 held d: its tombstone reaches it; a left before.
            #expect(try await changes(storage, since: 7) == ["d deleted", "e"])
            // A record deleted and created again after the reader's copy is judged by the state before the tombstone.
            try await F.commit([F.row("e", 10, deleted: true)], in: storage)
            try await F.commit([F.row("e", 11, #"{"title":"south"}"#)], in: storage)
            #expect(try await changes(storage, since: 9) == ["e gone"])
        }
    }

    @Test("the purge drops replaced states past the horizon and marks how far, without expiring cursors that do not need them", arguments: StorageBackend.all)
    func purge(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            try await F.commit([F.row("a", 1, #"{"title":"north"}"#)], at: F.epoch, in: storage)
            try await F.commit([F.row("a", 2, #"{"title":"south"}"#)], at: F.epoch + 100, in: storage)
            try await F.commit([F.row("a", 3, #"{"title":"east"}"#)], at: F.epoch + 10_000, in: storage)
            _ = try await storage.purge(tombstonesBefore: F.epoch + 1000, operationsBefore: F.epoch, now: F.epoch + 2000)
            let rows = try await storage.feedRange(project: "field", collection: F.notes, since: 3, snapshotHigh: nil, limit: 1, filter: nil)
            // The state a was replaced by version 2 is gone: a cursor under rules below 2 can no longer tell what it
            // holds. Readers without rules never needed it: their cursors stay valid.
            #expect(rows.historyThrough == 2)
            #expect(rows.purgedThrough == 0)
            let history = try await storage.exportRows(of: .recordHistory, after: nil, limit: 10)
            #expect(history.map { $0[3] } == [.integer(2)])
        }
    }
}
