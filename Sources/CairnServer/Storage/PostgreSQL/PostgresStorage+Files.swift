import CairnProtocol
import CairnSQL
import Foundation
import Logging
import PostgresNIO

extension PostgresStorage {
    /// Sums the project's `new` and `completed` sizes and inserts in one transaction under an advisory lock on the
    /// project's files, so two creations (on any instances) never both fit a quota only one fits.
    public func insertFile(_ file: StoredFile, projectBytesLimit: Int64?) async throws -> Bool {
        try await Self.transaction(client, logger: logger) { connection in
            if let projectBytesLimit {
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended(\("cairn.files:" + file.project), 0))", logger: logger)
                var held: Int64 = 0
                for try await sum in try await connection.query(
                    "SELECT coalesce(sum(size), 0)::int8 FROM files WHERE project = \(file.project) AND status IN ('new', 'completed')",
                    logger: logger
                ).decode(Int64.self) { held = sum }
                guard held + file.size <= projectBytesLimit else { return false }
            }
            try await connection.query(
                """
                INSERT INTO files (\(unescaped: FileColumns.list)) VALUES (\(file.project), \(file.id), \(file.name), \(file.contentType),
                    \(file.size), \(file.sha256), \(file.status.rawValue), \(file.tagsText), \(file.isPublic), \(file.createdAt.epochSeconds),
                    \(file.updatedAt.epochSeconds), \(file.createdBy), \(file.attachToText), \(file.attachedVersion), \(file.expiresAt?.epochSeconds),
                    \(file.source), \(file.permissionsText))
                """, logger: logger)
            return true
        }
    }

    /// Reads the `files` row by its key.
    public func file(project: String, id: String) async throws -> StoredFile? {
        try await files("SELECT \(unescaped: FileColumns.list) FROM files WHERE project = \(project) AND id = \(id)").first
    }

    /// Reads the `files` row by its id alone (ids are unique across projects).
    public func file(id: String) async throws -> StoredFile? {
        try await files("SELECT \(unescaped: FileColumns.list) FROM files WHERE id = \(id)").first
    }

    /// One `UPDATE ... WHERE status = ...`: a compare-and-set on the status, whatever instance runs it.
    public func replaceFile(_ file: StoredFile, ifStatus expected: FileStatus) async throws -> Bool {
        try await !files(
            """
            UPDATE files SET name = \(file.name), content_type = \(file.contentType), size = \(file.size), sha256 = \(file.sha256),
                status = \(file.status.rawValue), tags = \(file.tagsText), public = \(file.isPublic),
                created_at = \(file.createdAt.epochSeconds), updated_at = \(file.updatedAt.epochSeconds), created_by = \(file.createdBy),
                attach_to = \(file.attachToText), attached_version = \(file.attachedVersion), expires_at = \(file.expiresAt?.epochSeconds),
                source = \(file.source), permissions = \(file.permissionsText)
            WHERE project = \(file.project) AND id = \(file.id) AND status = \(expected.rawValue)
            RETURNING \(unescaped: FileColumns.list)
            """
        ).isEmpty
    }

    /// Statuses by `= ANY`, tags with `jsonb ?`, the name with SQLite's `LIKE` rules (``PostgresDialect``), by id
    /// in byte order.
    public func searchFiles(project: String, query: FileQuery) async throws -> [StoredFile] {
        // Names and tags cannot hold U+0000, so a pattern or tag with it matches nothing; ids after "x\0..." are the
        // ids after "x".
        if let pattern = query.namePattern, Self.holdsNUL(pattern) { return [] }
        if query.tags.contains(where: { Self.holdsNUL($0) }) { return [] }
        let after = query.after.map { String(decoding: $0.utf8.prefix { $0 != 0 }, as: UTF8.self) }
        var binds = PostgresBindings()
        binds.append(project)
        binds.append(FileStatus.allCases.filter(query.statuses.contains).map(\.rawValue))
        var sql = "SELECT \(FileColumns.list) FROM files WHERE project = $1 AND status = ANY($2::text[])"
        if let pattern = query.namePattern {
            binds.append(pattern)
            sql += " AND " + PostgresDialect().like("name", pattern: "$\(binds.count)")
        }
        for tag in query.tags {
            binds.append(tag)
            sql += " AND tags::jsonb ? $\(binds.count)"
        }
        if let after {
            binds.append(after)
            sql += " AND id COLLATE \"C\" > $\(binds.count)"
        }
        binds.append(Int64(query.limit))
        sql += " ORDER BY id COLLATE \"C\" LIMIT $\(binds.count)"
        return try await files(PostgresQuery(unsafeSQL: sql, binds: binds))
    }

    /// Reads the partial index of `new` files by expiry.
    public func expiredFiles(before date: Date, limit: Int) async throws -> [StoredFile] {
        try await files(
            """
            SELECT \(unescaped: FileColumns.list) FROM files WHERE status = 'new' AND expires_at < \(date.epochSeconds)
            ORDER BY expires_at LIMIT \(Int64(limit))
            """)
    }

    /// Deletes the row only while its status is `new`.
    public func removeNewFile(project: String, id: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM files WHERE project = \(project) AND id = \(id) AND status = 'new' RETURNING id", logger: logger)
        return try await rows.decode(String.self).first(where: { _ in true }) != nil
    }

    /// One query over the ids as an array.
    public func completedFiles(project: String, ids: [String]) async throws -> Set<String> {
        let rows = try await client.query(
            "SELECT id FROM files WHERE project = \(project) AND status = 'completed' AND id = ANY(\(ids)::text[])", logger: logger)
        var found = Set<String>()
        for try await id in rows.decode(String.self) { found.insert(id) }
        return found
    }

    /// Reads `file_limits`; a project without a row has no limits of its own.
    public func fileLimits(project: String) async throws -> FileLimits {
        let rows = try await client.query(
            "SELECT maximum_file_bytes, maximum_project_bytes FROM file_limits WHERE project = \(project)", logger: logger)
        for try await (file, total) in rows.decode((Int64?, Int64?).self) {
            return FileLimits(maximumFileBytes: file, maximumProjectBytes: total)
        }
        return FileLimits()
    }

    /// Upserts `file_limits` for an existing project in one statement; `not_found` for an unknown project.
    public func setFileLimits(project: String, limits: FileLimits) async throws {
        let rows = try await client.query(
            """
            INSERT INTO file_limits (project, maximum_file_bytes, maximum_project_bytes)
            SELECT name, \(limits.maximumFileBytes), \(limits.maximumProjectBytes) FROM projects WHERE name = \(project)
            ON CONFLICT (project) DO UPDATE SET maximum_file_bytes = excluded.maximum_file_bytes,
                maximum_project_bytes = excluded.maximum_project_bytes
            RETURNING project
            """, logger: logger)
        guard try await rows.decode(String.self).first(where: { _ in true }) != nil else {
            throw ErrorBody(code: .notFound, message: "project \(project) does not exist")
        }
    }

    /// The files a query returns, read in ``FileColumns/list``'s order.
    private func files(_ query: PostgresQuery) async throws -> [StoredFile] {
        var found: [StoredFile] = []
        let rows = try await client.query(query, logger: logger)
        for try await columns in rows.decode(
            (String, String, String, String, Int64, String?, String, String, Bool, Double, Double, String, String?, Int64?, Double?, String?, String?).self)
        {
            found.append(try FileColumns.file(columns))
        }
        return found
    }
}

/// The `files` table's columns on PostgreSQL, in one order for reads and writes.
private enum FileColumns {
    static let list = StoredFile.columnList

    /// A row read in ``list``'s order.
    static func file(
        _ row: (String, String, String, String, Int64, String?, String, String, Bool, Double, Double, String, String?, Int64?, Double?, String?, String?)
    ) throws -> StoredFile {
        StoredFile(
            project: row.0, id: row.1, name: row.2, contentType: row.3, size: row.4, sha256: row.5,
            status: FileStatus(rawValue: row.6) ?? .deleted, tags: try StoredFile.tags(fromText: row.7), isPublic: row.8,
            createdAt: Date(timeIntervalSince1970: row.9), updatedAt: Date(timeIntervalSince1970: row.10), createdBy: row.11,
            attachTo: try row.12.map(StoredFile.attachment(fromText:)), attachedVersion: row.13,
            expiresAt: row.14.map(Date.init(timeIntervalSince1970:)), source: row.15,
            permissions: try StoredFile.permissions(fromText: row.16))
    }
}
