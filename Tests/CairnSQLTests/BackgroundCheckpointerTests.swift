import CairnSQL
import Foundation
import GRDB
import Testing

@Suite("WAL checkpoints off the writer")
struct BackgroundCheckpointerTests {
    /// A WAL database in a folder of its own, removed after `body`.
    func withPool(_ body: (DatabasePool, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("db.sqlite").path
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (x TEXT)") }
        try body(pool, path)
        try pool.close()
    }

    /// Commits `count` transactions of about 40 pages each.
    func commit(_ pool: DatabasePool, _ count: Int) throws {
        for _ in 0..<count {
            try pool.write { db in
                for _ in 0..<40 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [String(repeating: "x", count: 4000)]) }
            }
        }
    }

    /// The WAL's length in frames (a passive checkpoint, which also copies them: call it last).
    func walFrames(_ pool: DatabasePool) throws -> Int {
        try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")![1] }
    }

    @Test("past the threshold, the commit asks and a checkpoint runs on the checkpointer's own connection")
    func backgroundCheckpoints() async throws {
        try withPool { pool, path in
            let checkpointer = try BackgroundCheckpointer(path: path, threshold: 100, backstop: 1_000_000)
            pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
            try commit(pool, 2)
            #expect(checkpointer.completedCheckpoints == 0)
            try commit(pool, 10)
            checkpointer.close()
            #expect(checkpointer.completedCheckpoints >= 1)
        }
    }

    @Test("the hook replaces SQLite's automatic checkpoint: the WAL grows past a thousand pages")
    func replacesAutomaticCheckpoints() throws {
        try withPool { pool, path in
            let checkpointer = try BackgroundCheckpointer(path: path, threshold: .max, backstop: .max)
            pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
            try commit(pool, 30)
            #expect(try walFrames(pool) > 1000)
            checkpointer.close()
        }
    }

    @Test("at the backstop the writer checkpoints itself, and the WAL starts over")
    func backstop() throws {
        try withPool { pool, path in
            let checkpointer = try BackgroundCheckpointer(path: path, threshold: .max, backstop: 300)
            pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
            try commit(pool, 30)
            // Without a checkpoint the WAL would hold over a thousand frames.
            #expect(try walFrames(pool) < 300)
            #expect(checkpointer.completedCheckpoints == 0)
            checkpointer.close()
        }
    }

    @Test("a writer that outlives its checkpointer goes on committing, and checkpoints as SQLite would")
    func writerOutlivesCheckpointer() throws {
        try withPool { pool, path in
            do {
                let checkpointer = try BackgroundCheckpointer(path: path, threshold: .max, backstop: .max)
                pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
            }
            try commit(pool, 30)
            // A thousand pages, SQLite's own checkpoint size: the WAL started over.
            #expect(try walFrames(pool) < 1000)
        }
    }
}
