import CairnProtocol
import Foundation
import GRDB
import Synchronization

/// The default backend: one embedded SQLite database (WAL mode) in the data directory.
///
/// Writes are serialised by SQLite's single writer, so versions are committed in order and the changes feed is
/// gap-free; reads run concurrently on WAL snapshots.
///
/// ```swift
/// let storage = try SQLiteStorage(path: dataDirectory.appending(path: "cairn.sqlite").path)
/// ```
public final class SQLiteStorage: ServerStorage {
    let pool: DatabasePool
    /// Project schemas as last decoded, with the stored text they came from.
    let decodedSchemas = Mutex<[String: (text: String, schema: Schema)]>([:])

    /// Opens (creating if needed) the database at `path` and migrates it to the current version.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL with FULL sync: every commit reaches the disk before the server answers, so a write it
            // acknowledged survives a power cut too (clients drop what the server acknowledged).
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA cache_size = -16384")
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try SQLiteMigrations.migrator.migrate(pool)
    }
}

extension SQLArgument {
    /// The GRDB value of a compiled filter's argument.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let int): return int.databaseValue
        case .real(let double): return double.databaseValue
        case .text(let text): return text.databaseValue
        }
    }
}

extension Date {
    var epochSeconds: Double { timeIntervalSince1970 }
}

extension SQLiteStorage {
    /// Diagnostics: the project's head version and how many remembered operations were applied with a new version.
    /// With creates and updates only, the two are equal exactly when no operation was applied twice.
    public func operationCounts(project: String) throws -> (head: Int64, applied: Int) {
        try pool.read { db in
            let head = try Int64.fetchOne(db, sql: "SELECT head_version FROM projects WHERE name = ?", arguments: [project]) ?? 0
            let applied = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM operations WHERE project = ? AND json_extract(result, '$.status') = 'applied'
                """, arguments: [project]) ?? 0
            return (head, applied)
        }
    }

    /// Diagnostics: how the server answered the operation `opId`, while it remembers it; `nil` if it never saw it.
    public func operationStatus(project: String, opId: String) throws -> OperationStatus? {
        try pool.read { db in
            try String.fetchOne(db, sql: """
                SELECT json_extract(result, '$.status') FROM operations WHERE project = ? AND op_id = ?
                """, arguments: [project, opId]).flatMap(OperationStatus.init(rawValue:))
        }
    }
}
