import Foundation

/// Where a store keeps files on disk: next to a file store (`STORE-files/`), in a temporary folder for a store in
/// memory. Copies of queued uploads live in `uploads/`, downloaded files in `cache/`; both are named by ids, never
/// by the files' names.
struct FileFolder: Sendable {
    let root: URL

    init(store: StoreLocation) {
        switch store {
        case .file(let path): root = URL(fileURLWithPath: path + "-files", isDirectory: true)
        case .inMemory: root = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-files-\(UUID().uuidString)", isDirectory: true)
        }
    }

    var uploads: URL { root.appendingPathComponent("uploads", isDirectory: true) }
    var cache: URL { root.appendingPathComponent("cache", isDirectory: true) }

    /// The copy of a queued upload, by its path relative to the root.
    func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    /// Makes the folders.
    func prepare() throws {
        for folder in [uploads, cache] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
    }

    /// Puts the app's file in `uploads/` under `name` without copying when the file system allows (a hard link),
    /// else as a copy: the app may delete or move its own file at once.
    func keep(_ source: URL, as name: String) throws -> String {
        try prepare()
        let destination = uploads.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: destination)
        do {
            try FileManager.default.linkItem(at: source, to: destination)
        } catch {
            try FileManager.default.copyItem(at: source, to: destination)
        }
        return "uploads/" + name
    }

    /// Removes files and folders of the store (``CairnClient/wipe()``).
    func removeAll() { try? FileManager.default.removeItem(at: root) }
}
