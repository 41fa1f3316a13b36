import CairnProtocol
import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO

/// Moves a server from its data directory (SQLite and a files folder) to PostgreSQL: every table row as it is
/// (versions, cursors' marks, tokens, clients, remembered operations, tombstones) and every file's bytes, so that
/// clients go on from their cursors without a new snapshot, and signed-in users stay signed in.
///
/// Rows are copied in pages, each page in one upsert, and bytes in 1 MB steps; nothing is deleted. A run that is
/// interrupted can be run again: rows already there are written again with the same values, and a file's copy
/// resumes from the bytes already there. Stop the SQLite server first, and start the PostgreSQL servers after.
///
/// ```swift
/// let report = try await ServerMigration.run(from: dataDirectory, to: "postgres://cairn@db/cairn") { print($0) }
/// ```
public enum ServerMigration {
    /// What a run copied.
    public struct Report: Sendable, Hashable {
        /// Rows copied, by table.
        public var rows: [String: Int] = [:]
        /// Files whose bytes were copied (or completed) by this run.
        public var files = 0
        /// File bytes copied by this run.
        public var bytes: Int64 = 0
    }

    /// Copies the server in `dataDirectory` into the PostgreSQL database at `url` (migrating its tables first);
    /// `progress` receives a line per table and per file copied.
    public static func run(
        from dataDirectory: URL, to url: String, logger: Logger = Logger(label: "cairn.migrate"), progress: (String) -> Void = { _ in }
    ) async throws -> Report {
        let configuration = ServerConfiguration(dataDirectory: dataDirectory)
        guard FileManager.default.fileExists(atPath: configuration.databasePath) else {
            throw ErrorBody(code: .notFound, message: "\(configuration.databasePath) does not exist: --from-data must be a server's data directory")
        }
        let source = try SQLiteStorage(path: configuration.databasePath)
        let target = try await PostgresStorage(url: url, logger: logger)
        do {
            var report = Report()
            for table in Table.all {
                report.rows[table.name] = try await copy(table, from: source, to: target, logger: logger)
                progress("\(table.name): \(report.rows[table.name] ?? 0) rows")
            }
            try await copyFiles(
                from: source, DirectoryBlobStore(root: configuration.filesDirectory), to: PostgresBlobStore(storage: target), report: &report,
                progress: progress)
            try await source.close()
            await target.close()
            return report
        } catch {
            try? await source.close()
            await target.close()
            throw error
        }
    }

    /// A column's type, as SQLite stores it and PostgreSQL wants it.
    enum Kind { case text, integer, real, boolean }

    /// A table to copy: its columns in order, the leading `keyCount` of them its primary key.
    struct Table {
        let name: String
        let columns: [(String, Kind, optional: Bool)]
        let keyCount: Int

        /// In an order the foreign keys accept.
        static let all: [Table] = [
            Table(name: "users", columns: [("name", .text, false), ("password_hash", .text, false), ("created_at", .real, false)], keyCount: 1),
            Table(name: "projects", columns: [
                ("name", .text, false), ("schema_json", .text, false), ("head_version", .integer, false), ("created_at", .real, false),
            ], keyCount: 1),
            Table(name: "members", columns: [("project", .text, false), ("user", .text, false), ("role", .text, false)], keyCount: 2),
            Table(name: "tokens", columns: [
                ("hash", .text, false), ("kind", .text, false), ("user", .text, false), ("family", .text, false), ("expires_at", .real, false),
                ("revoked", .boolean, false), ("used", .boolean, false),
            ], keyCount: 1),
            Table(name: "records", columns: [
                ("project", .text, false), ("collection", .text, false), ("id", .text, false), ("version", .integer, false),
                ("updated_at", .text, false), ("updated_by", .text, false), ("changed_at", .real, false), ("deleted", .boolean, false),
                ("data", .text, false), ("field_versions", .text, false),
            ], keyCount: 3),
            Table(name: "collection_state", columns: [
                ("project", .text, false), ("collection", .text, false), ("purged_through", .integer, false),
            ], keyCount: 2),
            Table(name: "operations", columns: [
                ("project", .text, false), ("op_id", .text, false), ("fingerprint", .text, false), ("result", .text, false),
                ("created_at", .real, false),
            ], keyCount: 2),
            Table(name: "clients", columns: [
                ("id", .text, false), ("project", .text, false), ("user", .text, false), ("device", .text, true), ("app", .text, true),
                ("created_at", .real, false), ("last_pulled_version", .integer, false), ("last_seen", .real, false),
            ], keyCount: 1),
            Table(name: "files", columns: [
                ("project", .text, false), ("id", .text, false), ("name", .text, false), ("content_type", .text, false), ("size", .integer, false),
                ("sha256", .text, true), ("status", .text, false), ("tags", .text, false), ("public", .boolean, false),
                ("created_at", .real, false), ("updated_at", .real, false), ("created_by", .text, false), ("attach_to", .text, true),
                ("attached_version", .integer, true), ("expires_at", .real, true),
            ], keyCount: 2),
            Table(name: "file_limits", columns: [
                ("project", .text, false), ("maximum_file_bytes", .integer, true), ("maximum_project_bytes", .integer, true),
            ], keyCount: 1),
        ]
    }

    /// Copies a table in pages of rows (by rowid), each page one upsert; returns the rows copied.
    static func copy(_ table: Table, from source: SQLiteStorage, to target: PostgresStorage, logger: Logger) async throws -> Int {
        let names = table.columns.map { "\"\($0.0)\"" }
        let page = max(1, 20_000 / table.columns.count)
        var after: Int64 = 0
        var copied = 0
        while true {
            let rows = try await source.pool.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT rowid, \(names.joined(separator: ", ")) FROM \(table.name) WHERE rowid > ? ORDER BY rowid LIMIT ?",
                    arguments: [after, page])
            }
            guard let last = rows.last else { return copied }
            after = last[0]
            var binds = PostgresBindings(capacity: rows.count * table.columns.count)
            var tuples: [String] = []
            for row in rows {
                var placeholders: [String] = []
                for (index, column) in table.columns.enumerated() {
                    let value = row[index + 1] as DatabaseValue
                    if value.isNull {
                        binds.appendNull()
                    } else {
                        switch column.1 {
                        case .text: binds.append(String.fromDatabaseValue(value) ?? "")
                        case .integer: binds.append(Int64.fromDatabaseValue(value) ?? 0)
                        case .real: binds.append(Double.fromDatabaseValue(value) ?? 0)
                        case .boolean: binds.append((Int64.fromDatabaseValue(value) ?? 0) != 0)
                        }
                    }
                    placeholders.append("$\(binds.count)")
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            let keys = names.prefix(table.keyCount).joined(separator: ", ")
            let updates = names.dropFirst(table.keyCount).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            let sql = """
                INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))
                ON CONFLICT (\(keys)) DO \(updates.isEmpty ? "NOTHING" : "UPDATE SET \(updates)")
                """
            try await target.client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            copied += rows.count
        }
    }

    /// Copies the bytes of every `new` and `completed` file that PostgreSQL holds fewer of, from where its copy
    /// stopped, in 1 MB steps.
    static func copyFiles(
        from source: SQLiteStorage, _ sourceBlobs: DirectoryBlobStore, to targetBlobs: PostgresBlobStore, report: inout Report,
        progress: (String) -> Void
    ) async throws {
        let files = try await source.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT project, id FROM files WHERE status IN ('new', 'completed') ORDER BY rowid")
                .map { (project: $0[0] as String, id: $0[1] as String) }
        }
        let step: Int64 = 1 << 20
        for file in files {
            let size = try await sourceBlobs.size(project: file.project, id: file.id)
            var offset = try await targetBlobs.size(project: file.project, id: file.id)
            if offset > size { offset = 0 }
            guard offset < size else { continue }
            let start = offset
            while offset < size {
                var piece = ByteBuffer()
                let end = min(size, offset + step)
                try await sourceBlobs.read(project: file.project, id: file.id, range: offset..<end) { chunk in
                    var chunk = chunk
                    piece.writeBuffer(&chunk)
                }
                offset = try await targetBlobs.write(project: file.project, id: file.id, at: offset, limit: size, from: Self.once(piece))
            }
            report.files += 1
            report.bytes += size - start
            progress("file \(file.project)/\(file.id): \(size - start) bytes")
        }
    }

    /// One buffer as an async sequence.
    static func once(_ buffer: ByteBuffer) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            continuation.yield(buffer)
            continuation.finish()
        }
    }
}
