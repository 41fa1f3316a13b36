import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Sums the project's `new` and `completed` sizes and inserts in one write transaction, so two creations never
    /// both fit a quota only one fits.
    public func insertFile(_ file: StoredFile, projectBytesLimit: Int64?) async throws -> Bool {
        try await write { db in
            if let projectBytesLimit {
                let held = try Int64.fetchOne(db, sql: """
                    SELECT coalesce(sum(size), 0) FROM files WHERE project = ? AND status IN ('new', 'completed')
                    """, arguments: [file.project]) ?? 0
                guard held + file.size <= projectBytesLimit else { return false }
            }
            try db.execute(sql: """
                INSERT INTO files (\(FileRowColumns.list)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: FileRowColumns.arguments(file))
            return true
        }
    }

    /// Reads the `files` row by its key.
    public func file(project: String, id: String) async throws -> StoredFile? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(FileRowColumns.list) FROM files WHERE project = ? AND id = ?", arguments: [project, id])
                .map(FileRowColumns.file)
        }
    }

    /// Reads the `files` row by its id alone (ids are unique across projects).
    public func file(id: String) async throws -> StoredFile? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(FileRowColumns.list) FROM files WHERE id = ?", arguments: [id]).map(FileRowColumns.file)
        }
    }

    /// One `UPDATE ... WHERE status = ?`: a compare-and-set on the status.
    public func replaceFile(_ file: StoredFile, ifStatus expected: FileStatus) async throws -> Bool {
        try await write { db in
            let values = FileRowColumns.values(file)
            try db.execute(sql: """
                UPDATE files SET name = ?, content_type = ?, size = ?, sha256 = ?, status = ?, tags = ?, public = ?,
                created_at = ?, updated_at = ?, created_by = ?, attach_to = ?, attached_version = ?, expires_at = ?, source = ?,
                permissions = ?
                WHERE project = ? AND id = ? AND status = ?
                """, arguments: StatementArguments(Array(values.dropFirst(2)) + [file.project, file.id, expected.rawValue]))
            return db.changesCount == 1
        }
    }

    /// Statuses and tags match through `json_each`, the name with SQLite's `LIKE`, in id order.
    public func searchFiles(project: String, query: FileQuery) async throws -> [StoredFile] {
        var sql = "SELECT \(FileRowColumns.list) FROM files WHERE project = ?"
        var arguments: StatementArguments = [project]
        let statuses = FileStatus.allCases.filter(query.statuses.contains).map(\.rawValue)
        sql += " AND status IN (SELECT value FROM json_each(?))"
        arguments += [JSONValue.array(statuses.map { .string($0) }).jsonText()]
        if let pattern = query.namePattern {
            // SQLite's LIKE: `%`, `_`, ASCII letters regardless of case, no escape, as in filters.
            sql += " AND name LIKE ?"
            arguments += [pattern]
        }
        for tag in query.tags {
            sql += " AND EXISTS (SELECT 1 FROM json_each(files.tags) WHERE value = ?)"
            arguments += [tag]
        }
        if let after = query.after {
            sql += " AND id > ?"
            arguments += [after]
        }
        sql += " ORDER BY id LIMIT ?"
        arguments += [query.limit]
        let (text, values) = (sql, arguments)
        return try await pool.read { db in try Row.fetchAll(db, sql: text, arguments: values).map(FileRowColumns.file) }
    }

    /// Reads the partial index of `new` files by expiry.
    public func expiredFiles(before date: Date, limit: Int) async throws -> [StoredFile] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(FileRowColumns.list) FROM files WHERE status = 'new' AND expires_at < ? ORDER BY expires_at LIMIT ?
                """, arguments: [date.epochSeconds, limit]).map(FileRowColumns.file)
        }
    }

    /// Deletes the row only while its status is `new`.
    public func removeNewFile(project: String, id: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM files WHERE project = ? AND id = ? AND status = 'new'", arguments: [project, id])
            return db.changesCount == 1
        }
    }

    /// One query over the ids as a JSON array.
    public func completedFiles(project: String, ids: [String]) async throws -> Set<String> {
        let list = JSONValue.array(ids.map { .string($0) }).jsonText()
        return try await pool.read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT id FROM files WHERE project = ? AND status = 'completed' AND id IN (SELECT value FROM json_each(?))
                """, arguments: [project, list]))
        }
    }

    /// Reads `file_limits`; a project without a row has no limits of its own.
    public func fileLimits(project: String) async throws -> FileLimits {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT maximum_file_bytes, maximum_project_bytes FROM file_limits WHERE project = ?
                """, arguments: [project]) else { return FileLimits() }
            return FileLimits(maximumFileBytes: row[0], maximumProjectBytes: row[1])
        }
    }

    /// Upserts `file_limits`; `not_found` for an unknown project.
    public func setFileLimits(project: String, limits: FileLimits) async throws {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM projects WHERE name = ?", arguments: [project]) != nil else {
                throw ErrorBody(code: .notFound, message: "project \(project) does not exist")
            }
            try db.execute(sql: """
                INSERT INTO file_limits (project, maximum_file_bytes, maximum_project_bytes) VALUES (?, ?, ?)
                ON CONFLICT (project) DO UPDATE SET maximum_file_bytes = excluded.maximum_file_bytes,
                maximum_project_bytes = excluded.maximum_project_bytes
                """, arguments: [project, limits.maximumFileBytes, limits.maximumProjectBytes])
        }
    }
}

/// The `files` table's columns, in one order for reads and writes.
enum FileRowColumns {
    static let list = StoredFile.columnList

    /// The values of `file`, in ``list``'s order.
    static func arguments(_ file: StoredFile) -> StatementArguments { StatementArguments(values(file)) }

    /// The values of `file`, in ``list``'s order.
    static func values(_ file: StoredFile) -> [(any DatabaseValueConvertible)?] {
        [
            file.project, file.id, file.name, file.contentType, file.size, file.sha256, file.status.rawValue, file.tagsText, file.isPublic,
            file.createdAt.epochSeconds, file.updatedAt.epochSeconds, file.createdBy, file.attachToText, file.attachedVersion,
            file.expiresAt?.epochSeconds, file.source, file.permissionsText,
        ]
    }

    /// A row read in ``list``'s order.
    static func file(_ row: Row) throws -> StoredFile {
        StoredFile(
            project: row[0], id: row[1], name: row[2], contentType: row[3], size: row[4], sha256: row[5],
            status: FileStatus(rawValue: row[6]) ?? .deleted, tags: try StoredFile.tags(fromText: row[7]), isPublic: row[8],
            createdAt: Date(timeIntervalSince1970: row[9]), updatedAt: Date(timeIntervalSince1970: row[10]), createdBy: row[11],
            attachTo: try (row[12] as String?).map(StoredFile.attachment(fromText:)), attachedVersion: row[13], expiresAt: (row[14] as Double?).map(Date.init(timeIntervalSince1970:)),
            source: row[15], permissions: try StoredFile.permissions(fromText: row[16]))
    }
}
