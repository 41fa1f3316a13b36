import Foundation
import GRDB

/// The bookkeeping of downloaded files: what is kept, when it was last read, and which to evict.
extension LocalStore {
    /// The cached file's path relative to the files folder, marking it read now.
    func cachedFile(_ fileID: String) throws -> String? {
        try writeBookkeeping { db in try fileCache.touch(db, fileID: fileID, at: now) }
    }

    /// Notes a file now kept at `path`.
    func cacheFile(_ fileID: String, path: String, size: Int64, pinned: Bool) throws {
        try writeBookkeeping { db in try fileCache.insert(db, fileID: fileID, path: path, size: size, pinned: pinned, at: now) }
    }

    /// Pins or unpins a cached file.
    func pinFile(_ fileID: String, _ pinned: Bool) throws {
        try writeBookkeeping { db in try fileCache.setPinned(db, fileID: fileID, pinned) }
    }

    /// Forgets the least recently read unpinned files until the rest fit in `bound` bytes, never `keeping`;
    /// returns the paths to delete.
    func evictFiles(toFit bound: Int64, keeping: String?) throws -> [String] {
        try writeBookkeeping { db in
            var held = try fileCache.evictableBytes(db)
            var evicted: [String] = []
            while held > bound {
                let candidates = try fileCache.leastRecentlyUsed(db, limit: 64).filter { $0.fileID != keeping }
                guard !candidates.isEmpty else { break }
                for candidate in candidates where held > bound {
                    _ = try fileCache.remove(db, fileID: candidate.fileID)
                    held -= candidate.size
                    evicted.append(candidate.path)
                }
            }
            return evicted
        }
    }

    /// Forgets a cached file; returns its path.
    func uncacheFile(_ fileID: String) throws -> String? {
        try writeBookkeeping { db in try fileCache.remove(db, fileID: fileID) }
    }

    /// The files kept: how many, their bytes, and the pinned bytes among them.
    func cacheTotals() throws -> (count: Int, bytes: Int64, pinnedBytes: Int64) {
        try writer.read { db in try fileCache.totals(db) }
    }

    /// The file ids the `file` fields of a collection's local records hold (server ids only).
    func fileReferences(collection: String) throws -> [String] {
        let table = try self.table(collection)
        let fields = table.schema.fields.filter { $0.type == .file }.map(\.name)
        guard !fields.isEmpty else { return [] }
        return try writer.read { db in
            var ids = Set<String>()
            for field in fields {
                let sql = "SELECT DISTINCT \(field.quotedDatabaseIdentifier) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(field.quotedDatabaseIdentifier) IS NOT NULL"
                for id in try String.fetchAll(db, sql: sql) where !id.hasPrefix(Self.localFilePrefix) { ids.insert(id) }
            }
            return ids.sorted()
        }
    }
}
