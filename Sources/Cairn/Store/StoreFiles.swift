import Foundation

/// The files a store at a path is made of on disk, named once: the database, SQLite's side-cars beside it (WAL, its
/// index, the rollback journal), and the copy a rewrite (``StoreEncryption``) makes beside it with its own side-cars.
///
/// ```swift
/// for file in StoreFiles.all(of: path) { try? FileManager.default.removeItem(atPath: file) }
/// ```
enum StoreFiles {
    /// The suffixes SQLite gives the files it keeps beside a database.
    static let sideCarSuffixes = ["-wal", "-shm", "-journal"]

    /// SQLite's side-cars of the database at `path`.
    static func sideCars(of path: String) -> [String] { sideCarSuffixes.map { path + $0 } }

    /// The copy a rewrite makes beside the store at `path` before renaming it over the store.
    static func rewriteCopy(of path: String) -> String { path + ".rekey" }

    /// What an interrupted rewrite of the store at `path` can leave: the copy and its side-cars.
    static func rewriteLeftovers(of path: String) -> [String] {
        let copy = rewriteCopy(of: path)
        return [copy] + sideCars(of: copy)
    }

    /// Whether the store at `path` exists but cannot be written: the file, or the folder that holds it and its
    /// side-cars, refuses writes (a read-only file system, missing write permission). Such a store opens for reading.
    static func isReadOnly(_ path: String) -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        let folder = (path as NSString).deletingLastPathComponent
        return access(path, W_OK) != 0 || access(folder.isEmpty ? "." : folder, W_OK) != 0
    }

    /// Every file of the store at `path`: the database, its side-cars and a rewrite's leftovers.
    static func all(of path: String) -> [String] { [path] + sideCars(of: path) + rewriteLeftovers(of: path) }
}
