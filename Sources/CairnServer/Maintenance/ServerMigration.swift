import CairnProtocol
import Foundation
import Logging
import NIOCore

/// Copies a server from one backend to another (from a data directory to PostgreSQL, or back): every row of every
/// ``StorageTable`` as it is (versions, cursors' marks, tokens, clients, remembered operations, tombstones) and every
/// file's bytes, so that clients go on from their cursors without a new snapshot, and signed-in users stay signed in.
///
/// Rows move through the storage protocol (``ServerStorage/exportRows(of:after:limit:)`` out of the source,
/// ``ServerStorage/importRows(_:into:)`` into the target) in pages, and bytes through the ``BlobStore`` protocol in
/// 1 MB steps; nothing is deleted. A run that is interrupted can be run again: rows already there are written again
/// with the same values, and a file's copy resumes from the bytes already there. Stop the source's servers first,
/// and start the target's after.
///
/// ```swift
/// let report = try await ServerMigration.run(
///     from: .sqlite(dataDirectory: dataDirectory), to: .postgres(url: "postgres://cairn@db/cairn")) { print($0) }
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

    /// Copies the server that `source` holds (it must exist) into `target` (migrating its tables first);
    /// `progress` receives a line per table and per file copied.
    public static func run(
        from source: ServerBackend, to target: ServerBackend, logger: Logger = Logger(label: "cairn.migrate"),
        progress: (String) -> Void = { _ in }
    ) async throws -> Report {
        try source.checkExists()
        let from = try await source.open(logger: logger)
        let to: ServerBackend.Opened
        do {
            to = try await target.open(logger: logger)
        } catch {
            try? await from.storage.close()
            throw error
        }
        do {
            let report = try await copy(from: from, to: to, progress: progress)
            try await from.storage.close()
            try await to.storage.close()
            return report
        } catch {
            try? await from.storage.close()
            try? await to.storage.close()
            throw error
        }
    }

    /// Copies every table, then the bytes of every `new` and `completed` file, between two open backends.
    static func copy(from source: ServerBackend.Opened, to target: ServerBackend.Opened, progress: (String) -> Void) async throws -> Report {
        var report = Report()
        var files: [(project: String, id: String)] = []
        for table in StorageTable.all {
            let holdsBytes = table == .files
            report.rows[table.name] = try await copy(table, from: source.storage, to: target.storage) { rows in
                guard holdsBytes else { return }
                files += rows.compactMap(Self.fileWithBytes)
            }
            progress("\(table.name): \(report.rows[table.name] ?? 0) rows")
        }
        for file in files {
            let copied = try await copyBytes(project: file.project, id: file.id, from: source.blobs, to: target.blobs)
            guard let copied else { continue }
            report.files += 1
            report.bytes += copied
            progress("file \(file.project)/\(file.id): \(copied) bytes")
        }
        return report
    }

    /// Copies a table in pages, each page one import; `onPage` sees each page. Returns the rows copied.
    static func copy(
        _ table: StorageTable, from source: any ServerStorage, to target: any ServerStorage, onPage: ([StorageRow]) -> Void
    ) async throws -> Int {
        // Pages of about 20,000 values: one PostgreSQL statement stays far below its 65,535 parameters.
        let limit = max(1, 20_000 / table.columns.count)
        var after: StorageRow?
        var copied = 0
        while true {
            let rows = try await source.exportRows(of: table, after: after, limit: limit)
            guard let last = rows.last else { return copied }
            try await target.importRows(rows, into: table)
            onPage(rows)
            copied += rows.count
            after = table.key(of: last)
        }
    }

    /// The project and id of a row of ``StorageTable/files`` whose bytes are kept (`new` or `completed`).
    static func fileWithBytes(_ row: StorageRow) -> (project: String, id: String)? {
        let table = StorageTable.files
        guard let status = table.index(of: "status"), case .text(let text) = row[status], text == "new" || text == "completed",
            case .text(let project) = row[0], case .text(let id) = row[1]
        else { return nil }
        return (project, id)
    }

    /// Copies the bytes of one file that the target holds fewer of, from where its copy stopped, in 1 MB steps;
    /// returns the bytes copied, or `nil` when the target had them all.
    static func copyBytes(project: String, id: String, from source: any BlobStore, to target: any BlobStore) async throws -> Int64? {
        let size = try await source.size(project: project, id: id)
        var offset = try await target.size(project: project, id: id)
        // An empty file (or one with no bytes yet) still gets its blob, so later writes find it.
        guard offset != size || size == 0 else { return nil }
        if offset == 0 || offset > size {
            // A fresh copy: the target makes its blob (a folder store its project's folder too).
            offset = 0
            try await target.create(project: project, id: id)
        }
        let start = offset
        let step: Int64 = 1 << 20
        while offset < size {
            var piece = ByteBuffer()
            try await source.read(project: project, id: id, range: offset..<min(size, offset + step)) { chunk in
                var chunk = chunk
                piece.writeBuffer(&chunk)
            }
            offset = try await target.write(project: project, id: id, at: offset, limit: size, from: once(piece))
        }
        return size - start
    }

    /// One buffer as an async sequence.
    static func once(_ buffer: ByteBuffer) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            continuation.yield(buffer)
            continuation.finish()
        }
    }
}
