import CairnProtocol
import GRDB
import Testing

@testable import Cairn

@Suite("Local store migrations")
struct LocalMigrationTests {
    @Test("a store made by the first version keeps its queue and attempt counts when attempts move to their own table")
    func attemptsMoveApart() throws {
        let database = try DatabaseQueue()
        try LocalMigrations.migrator.migrate(database, upTo: "v1-cairn-tables")
        try database.write { db in
            for (seq, attempts) in [(1, 0), (2, 3), (3, 1)] {
                try db.execute(sql: """
                    INSERT INTO cairn_queue (seq, op_id, collection, record_id, op, data, attempts, created_at)
                    VALUES (?, ?, 'notes', ?, 'create', '{"title":"t"}', ?, 0)
                    """, arguments: [seq, "op-\(seq)", "n-\(seq)", attempts])
            }
        }
        try LocalMigrations.migrator.migrate(database)
        try database.write { db in
            let queue = QueueTable()
            let queued = try queue.all(db)
            #expect(queued.map(\.opId) == ["op-1", "op-2", "op-3"])
            #expect(queued.map(\.attempts) == [0, 3, 1])
            #expect(queued.map(\.data) == Array(repeating: ["title": "t"], count: 3))
            // Leaving the queue forgets the attempts too.
            try db.execute(sql: "DELETE FROM cairn_queue WHERE seq = 2")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM cairn_attempts") == 1)
            #expect(try queue.newest(db, collection: "notes", id: "n-3")?.attempts == 1)
        }
    }
}
