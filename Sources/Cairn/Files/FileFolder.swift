import Foundation

/// Where a store keeps files on disk: next to a file store (`STORE-files/`), in a temporary folder for a store in
/// memory. Copies of queued uploads live in `uploads/`, downloaded files in `cache/`; both are named by ids, never
/// by the files' names. An encrypted store keeps them sealed (``SealedFile``) with its files key.
struct FileFolder: Sendable {
    let root: URL
    /// The store that holds the files key; nil keeps files in the clear.
    private let keys: LocalStore?
    /// Where ``CairnFiles/fileURL(for:)`` puts decrypted copies of an encrypted store's files: a temporary folder of
    /// this client's own, removed by ``removeOpened()``.
    let opened = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-opened-\(UUID().uuidString)", isDirectory: true)

    /// True for the folder of a store in memory, which goes with its client (``removeLeftovers()``).
    let isTemporary: Bool

    init(store: StoreLocation, keys: LocalStore? = nil) {
        switch store {
        case .file(let path): root = URL(fileURLWithPath: path + "-files", isDirectory: true)
        case .inMemory: root = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-files-\(UUID().uuidString)", isDirectory: true)
        }
        isTemporary = store == .inMemory
        self.keys = keys
    }

    var uploads: URL { root.appendingPathComponent("uploads", isDirectory: true) }
    var cache: URL { root.appendingPathComponent("cache", isDirectory: true) }

    /// The key that opens sealed files here (a decrypted store keeps it to read the files sealed before).
    var readSealing: FileSealing? { keys?.fileSealing }

    /// The key new files are sealed with; nil when the store is in the clear.
    var writeSealing: FileSealing? { keys?.sealsFiles == true ? keys?.fileSealing : nil }

    /// The copy of a queued upload, by its path relative to the root.
    func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    /// Makes the folders.
    func prepare() throws {
        for folder in [uploads, cache] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
    }

    /// Puts the app's file in `uploads/` under `name`, so the app may delete or move its own file at once: sealed
    /// in an encrypted store, else without copying when the file system allows (a hard link), else as a copy.
    func keep(_ source: URL, as name: String) throws -> String {
        try prepare()
        let destination = uploads.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: destination)
        if let sealing = writeSealing {
            try seal(source, sealing: sealing, to: destination)
        } else {
            do {
                try FileManager.default.linkItem(at: source, to: destination)
            } catch {
                try FileManager.default.copyItem(at: source, to: destination)
            }
        }
        return "uploads/" + name
    }

    /// A reader of a kept file's clear bytes; in an encrypted store every kept file must be sealed.
    func reader(_ url: URL, offset: Int64 = 0, length: Int64? = nil) throws -> KeptFileReader {
        try KeptFileReader(url, sealing: readSealing, offset: offset, length: length, requireSealed: writeSealing != nil)
    }

    /// The bytes of a kept file, in the clear.
    func contents(of url: URL) throws -> Data {
        if writeSealing == nil, !SealedFile.isSealed(url) { return try Data(contentsOf: url, options: .mappedIfSafe) }
        return try reader(url).readToEnd()
    }

    /// Writes the clear bytes of kept file `url` to `destination` (replaced if present): a hard link for a file in
    /// the clear where the file system allows, a decrypted copy streamed segment by segment for a sealed one.
    func export(_ url: URL, to destination: URL) throws {
        try? FileManager.default.removeItem(at: destination)
        if writeSealing == nil, !SealedFile.isSealed(url) {
            do { try FileManager.default.linkItem(at: url, to: destination) } catch { try FileManager.default.copyItem(at: url, to: destination) }
            return
        }
        let source = try reader(url)
        let writer = try KeptFileWriter(destination, sealing: nil)
        defer { try? writer.close() }
        try writer.copy(from: source)
    }

    /// Seals every file kept in the clear (those kept before the store was encrypted), each replaced in one rename,
    /// then notes that the folder is sealed. A plaintext store only notes that new files are kept in the clear.
    func sealLeftovers() throws {
        guard let keys else { return }
        guard let sealing = writeSealing else {
            if try keys.files.filesAreSealed() { try keys.files.setFilesSealed(false) }
            return
        }
        guard try !keys.files.filesAreSealed() else { return }
        for folder in [uploads, cache] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names where !name.hasSuffix(".sealing") {
                let file = folder.appendingPathComponent(name)
                guard !SealedFile.isSealed(file) else { continue }
                let sealed = folder.appendingPathComponent(name + ".sealing")
                try? FileManager.default.removeItem(at: sealed)
                try seal(file, sealing: sealing, to: sealed)
                try StoreKeying.flush(sealed.path)
                guard rename(sealed.path, file.path) == 0 else {
                    throw CairnError(.storeFailed, "\(name) could not be replaced by its sealed copy (errno \(errno))")
                }
            }
            if FileManager.default.fileExists(atPath: folder.path) { try StoreKeying.flush(folder.path) }
            for name in names where name.hasSuffix(".sealing") { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        }
        try keys.files.setFilesSealed(true)
    }

    /// Writes a sealed copy of the clear file `source` at `destination`.
    private func seal(_ source: URL, sealing: FileSealing, to destination: URL) throws {
        let reader = try KeptFileReader(source, sealing: nil)
        let writer = try KeptFileWriter(destination, sealing: sealing)
        defer { try? writer.close() }
        try writer.copy(from: reader)
    }

    /// Removes files and folders of the store (``CairnClient/wipe()``), and the decrypted copies.
    func removeAll() {
        try? FileManager.default.removeItem(at: root)
        removeOpened()
    }

    /// Removes the decrypted copies ``CairnFiles/fileURL(for:)`` made.
    func removeOpened() { try? FileManager.default.removeItem(at: opened) }

    /// What a closed client leaves nobody to use: the decrypted copies, and a store in memory's whole folder.
    func removeLeftovers() {
        isTemporary ? removeAll() : removeOpened()
    }
}
