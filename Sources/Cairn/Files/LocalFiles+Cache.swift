import Foundation
import GRDB

/// The bookkeeping of downloaded files: what is kept, when it was last read, and which to evict.
extension LocalFiles {
    /// The cached file's path relative to the files folder, marking it read now.
    func cachedFile(_ fileID: String) throws -> String? {
        try store.writeBookkeeping { db in try store.fileCache.touch(db, fileID: fileID, at: store.now) }
    }

    /// Notes a file now kept at `path`.
    func cacheFile(_ fileID: String, path: String, size: Int64, pinned: Bool) throws {
        try store.writeBookkeeping { db in try store.fileCache.insert(db, fileID: fileID, path: path, size: size, pinned: pinned, at: store.now) }
    }

    /// Pins or unpins a cached file.
    func pinFile(_ fileID: String, _ pinned: Bool) throws {
        try store.writeBookkeeping { db in try store.fileCache.setPinned(db, fileID: fileID, pinned) }
    }

    /// Forgets the least recently read unpinned files until the rest fit in `bound` bytes, never `keeping`;
    /// returns the paths to delete.
    func evictFiles(toFit bound: Int64, keeping: String?) throws -> [String] {
        try store.writeBookkeeping { db in
            var held = try store.fileCache.evictableBytes(db)
            var evicted: [String] = []
            while held > bound {
                let candidates = try store.fileCache.leastRecentlyUsed(db, limit: 64).filter { $0.fileID != keeping }
                guard !candidates.isEmpty else { break }
                for candidate in candidates where held > bound {
                    _ = try store.fileCache.remove(db, fileID: candidate.fileID)
                    held -= candidate.size
                    evicted.append(candidate.path)
                }
            }
            return evicted
        }
    }

    /// Forgets a cached file; returns its path.
    func uncacheFile(_ fileID: String) throws -> String? {
        try store.writeBookkeeping { db in try store.fileCache.remove(db, fileID: fileID) }
    }

    /// The files kept: how many, their bytes, and the pinned bytes among them.
    func cacheTotals() throws -> (count: Int, bytes: Int64, pinnedBytes: Int64) {
        try store.writer.read { db in try store.fileCache.totals(db) }
    }

    /// The file ids the `file` fields of a collection's local records hold (server ids only).
    func fileReferences(collection: String, query: String? = nil) throws -> [String] {
        let table = try store.table(collection)
        let fields = table.schema.fields.filter { $0.type == .file }.map(\.name)
        guard !fields.isEmpty else { return [] }
        // With a download query, only the records it holds.
        let members = query == nil ? "" : " AND id IN (SELECT record_id FROM cairn_query_members WHERE query = ?)"
        return try store.writer.read { db in
            var ids = Set<String>()
            for field in fields {
                let sql = "SELECT DISTINCT \(field.quotedDatabaseIdentifier) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(field.quotedDatabaseIdentifier) IS NOT NULL"
                    + members
                for id in try String.fetchAll(db, sql: sql, arguments: StatementArguments(query.map { [$0] } ?? []))
                where !id.hasPrefix(LocalFiles.localFilePrefix) { ids.insert(id) }
            }
            return ids.sorted()
        }
    }
}
