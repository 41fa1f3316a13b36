import CairnProtocol
import Foundation

/// File attachments: uploads queued offline and sent in three resumable steps, downloads into a bounded local
/// cache, and the server's file search and changes. Reach it as ``CairnClient/files``.
///
/// ```swift
/// // Offline is fine: the record's photo field shows the local id until the server has the file.
/// let localID = try client.files.upload(from: photoURL, contentType: "image/jpeg",
///                                       attachTo: FileAttachment(collection: "notes", id: "n-1", field: "photo"))
/// let image = try await client.files.data(for: note.photo)   // a local id or a server id
/// ```
public struct CairnFiles: Sendable {
    let client: CairnClient

    // MARK: Uploads

    /// Queues an upload of the file at `fileURL` and returns its local id at once (`local-` and a UUID). The bytes
    /// are kept in the store's files folder (a hard link where the file system allows, else a copy; an encrypted
    /// copy, written before this returns, in an encrypted store), so the app may delete its file. The upload survives restarts; with `attachTo` it waits until that record is pushed,
    /// and the record's field shows the local id until the server completes the file and sets the field itself.
    ///
    /// `source` says where the file came from (HAT's `source`); `permissions` keeps it private to its uploader, the
    /// project's admins and the users it is shared with (``FilePermissions``), from the moment the server has it.
    /// - Throws: `file_too_large` over ``CairnConfiguration/maximumFileBytes``; `invalid_argument` for an unreadable
    ///   file, a field that is not a `file` field, or a private file asked to be public; `not_found` for a record that
    ///   does not exist locally.
    @discardableResult
    public func upload(
        from fileURL: URL, name: String? = nil, contentType: String? = nil, tags: [String] = [], public isPublic: Bool = false,
        attachTo: FileAttachment? = nil, source: String? = nil, permissions: FilePermissions = .project
    ) throws -> String {
        try client.checkOpen()
        if isPublic, permissions.access == .private { throw CairnError.invalid("a private file cannot be public") }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: fileURL.path)
        } catch {
            throw CairnError(.invalidArgument, "\(fileURL.lastPathComponent) cannot be read", cause: error)
        }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let limit = client.configuration.maximumFileBytes
        guard size <= limit else {
            throw CairnError(
                .fileTooLarge, "\(fileURL.lastPathComponent) has \(size) bytes; files are at most \(limit)", details: ["limit": .integer(limit)])
        }
        let localID = LocalFiles.localFilePrefix + UUID().uuidString.lowercased()
        let path: String
        do {
            path = try client.fileFolder.keep(fileURL, as: localID)
        } catch {
            throw CairnError(.storeFailed, "\(fileURL.lastPathComponent) could not be kept for upload", cause: error)
        }
        var job = FileUploadJob(
            localID: localID, name: name ?? fileURL.lastPathComponent, contentType: contentType ?? "application/octet-stream", size: size,
            sha256: "", tags: tags, isPublic: isPublic, attachTo: attachTo, path: path, createdAt: client.configuration.wallClock.now())
        job.source = source
        job.permissions = permissions
        do {
            try client.store.files.queueFileUpload(job)
        } catch {
            try? FileManager.default.removeItem(at: client.fileFolder.url(path))
            throw CairnError(wrapping: error)
        }
        let uploader = client.fileUploader
        client.background.start {
            await uploader.refreshCounts()
            await uploader.kick()
        }
        return localID
    }

    /// Uploads queued or running, oldest first.
    public func pendingUploads() throws -> [PendingFile] { try client.store.files.fileUploads(in: [.queued]).map(PendingFile.init) }

    /// Uploads that stopped (the server refused the file, or it kept failing), oldest first.
    public func failedUploads() throws -> [PendingFile] { try client.store.files.fileUploads(in: [.failed]).map(PendingFile.init) }

    /// The upload with this local id, in any state.
    public func upload(_ localID: String) throws -> PendingFile? { try client.store.files.fileUpload(localID: localID).map(PendingFile.init) }

    /// Queues a failed upload again, to start now, or a failed deletion (by its file id), for the next sync; false
    /// when neither has this id.
    @discardableResult
    public func retry(_ localID: String) async throws -> Bool {
        if try client.store.files.retryFileDeletion(localID) {
            client.noteLocalWrite()
            return true
        }
        let retried = try client.store.files.retryFileUpload(localID: localID)
        await client.fileUploader.refreshCounts()
        await client.fileUploader.kick()
        return retried
    }

    /// Drops a queued or failed upload and its local copy; a record field showing it goes back to its former value.
    /// Given a file id, drops a queued or failed deletion instead: the file stays on the server, its field cleared.
    public func discard(_ localID: String) async throws {
        if try client.store.files.discardFileDeletion(localID) { return }
        guard let job = try client.store.files.discardFileUpload(localID: localID) else {
            await client.fileUploader.refreshCounts()
            return
        }
        await forgetUpload(job)
    }

    /// After an upload job left the store (discarded, or cancelled by a delete): stops it if it runs, removes its
    /// local copy, and refreshes the counts.
    private func forgetUpload(_ job: FileUploadJob) async {
        await client.fileUploader.cancel(job.localID)
        try? FileManager.default.removeItem(at: client.fileFolder.url(job.path))
        await client.fileUploader.refreshCounts()
    }

    /// Waits until no upload is running and none is ready to start (the ones waiting for a retry or for their
    /// record to be pushed stay queued).
    public func waitForUploads() async { await client.fileUploader.drain() }

    // MARK: Downloads

    /// The local file of `id` (a local id of a pending upload, or a server id), downloading it into the cache if
    /// needed. Read it before it may be evicted, or ``pin(_:)`` it.
    ///
    /// An encrypted store keeps its files encrypted, so for one this is a decrypted copy in a temporary folder of
    /// the client's own, removed when the client closes or signs out. Prefer ``data(for:)``, ``read(_:chunk:_:)`` or
    /// ``copy(_:to:)`` there: they never put the bytes on disk in the clear (except where ``copy(_:to:)`` is told).
    public func fileURL(for id: String) async throws -> URL {
        let kept = try await keptFile(id)
        guard SealedFile.isSealed(kept) else { return kept }
        let folder = client.fileFolder
        do {
            try FileManager.default.createDirectory(at: folder.opened, withIntermediateDirectories: true)
            let copy = folder.opened.appendingPathComponent(id)
            try folder.export(kept, to: copy)
            return copy
        } catch {
            throw CairnError.storeFile(id, error)
        }
    }

    /// The bytes of `id`, downloading the file into the cache if needed.
    public func data(for id: String) async throws -> Data {
        let kept = try await keptFile(id)
        do { return try client.fileFolder.contents(of: kept) } catch { throw CairnError.storeFile(id, error) }
    }

    /// Hands the bytes of `id` to `body` in order, in chunks of at most `chunk` bytes, downloading the file into the
    /// cache first if needed. An encrypted store's file is decrypted one segment at a time, never whole.
    ///
    /// ```swift
    /// try await client.files.read(videoID) { chunk in try output.write(contentsOf: chunk) }
    /// ```
    public func read(_ id: String, chunk: Int = 1 << 20, _ body: (Data) async throws -> Void) async throws {
        let kept = try await keptFile(id)
        let reader: KeptFileReader
        do { reader = try client.fileFolder.reader(kept) } catch { throw CairnError.storeFile(id, error) }
        while true {
            let next: Data?
            do { next = try reader.next(upTo: max(1, chunk)) } catch { throw CairnError.storeFile(id, error) }
            guard let next else { return }
            try await body(next)
        }
    }

    /// Writes the bytes of `id` to `destination` (replacing what is there), downloading the file into the cache
    /// first if needed: a hard link where the file system allows for a store in the clear, a decrypted copy for an
    /// encrypted one.
    public func copy(_ id: String, to destination: URL) async throws {
        let kept = try await keptFile(id)
        do { try client.fileFolder.export(kept, to: destination) } catch { throw CairnError.storeFile(id, error) }
    }

    /// Makes `id` available offline: downloads it into the cache unless it is already on this device.
    public func download(_ id: String) async throws { _ = try await keptFile(id) }

    /// The kept file of `id`, as the store keeps it (sealed in an encrypted store).
    private func keptFile(_ id: String) async throws -> URL {
        try client.checkOpen()
        if try client.store.files.isFileDeleted(id) { throw CairnError(.notFound, "The file \(id) was deleted on this device") }
        return try await client.fileCache.url(for: id)
    }

    /// Whether `id` is on this device now (no download needed).
    public func isAvailableOffline(_ id: String) async throws -> Bool { try await client.fileCache.isCached(id) }

    /// Keeps a downloaded file out of eviction (downloading it first), or lets it go again.
    public func pin(_ id: String, _ pinned: Bool = true) async throws {
        if pinned { _ = try await keptFile(id) }
        try client.store.files.pinFile(id, pinned)
        if !pinned { try await client.fileCache.evict() }
    }

    /// Downloads the files the `file` fields of `collection`'s local records name, while they fit in the cache
    /// bound; returns how many were downloaded.
    @discardableResult
    public func prefetch(collection: String) async throws -> Int {
        try await prefetch(try client.store.files.fileReferences(collection: collection))
    }

    /// Downloads the files the records of a download query point at, as ``prefetch(collection:)`` does for a whole
    /// collection; ``CairnClient/createDownloadQuery(name:collection:filter:prefetchFiles:)`` with `prefetchFiles` does
    /// it after each sync. Returns how many were downloaded.
    @discardableResult
    public func prefetch(query name: String) async throws -> Int {
        guard let query = try DownloadQueryStore(store: client.store).state(name) else {
            throw CairnError(.notFound, "no download query is named \"\(name)\"")
        }
        return try await prefetch(try client.store.files.fileReferences(collection: query.collection, query: name))
    }

    /// Downloads the files of `ids` not kept yet, until the cache's bound stops it.
    private func prefetch(_ ids: [String]) async throws -> Int {
        var fetched = 0
        for id in ids where try await !client.fileCache.isCached(id) {
            guard try await client.fileCache.prefetch(id) else { break }
            fetched += 1
        }
        return fetched
    }

    /// The files kept on this device: how many, and their bytes (pinned ones included).
    public func cacheUsage() throws -> (files: Int, bytes: Int64) {
        let totals = try client.store.files.cacheTotals()
        return (totals.count, totals.bytes)
    }

    // MARK: The server's files

    /// The server's files matching `search`, every page.
    public func search(_ search: FileSearch = FileSearch()) async throws -> [FileMetadata] {
        var found: [FileMetadata] = []
        var after: String?
        repeat {
            let page = try await client.api.searchFiles(search, after: after)
            found += page.files
            after = page.next
        } while after != nil
        return found
    }

    /// A file's metadata on the server.
    public func metadata(_ id: String) async throws -> FileMetadata { try await client.api.fileMetadata(fileID: try serverID(id)) }

    /// Renames a file on the server.
    @discardableResult
    public func rename(_ id: String, to name: String) async throws -> FileMetadata {
        try await client.api.updateFile(fileID: try serverID(id), FileUpdate(name: name))
    }

    /// Replaces a file's tags on the server.
    @discardableResult
    public func retag(_ id: String, _ tags: [String]) async throws -> FileMetadata {
        try await client.api.updateFile(fileID: try serverID(id), FileUpdate(tags: tags))
    }

    /// Shares a private file with more users, who may then find, read and download it (not change it). The uploader's
    /// and the project's admins' to do.
    ///
    /// ```swift
    /// try await client.files.share(reportID, with: ["ana", "ben"])
    /// ```
    /// - Throws: `forbidden` for another user's file; `not_found` for a file the caller cannot see.
    @discardableResult
    public func share(_ id: String, with users: [String]) async throws -> FileMetadata {
        try await client.api.shareFile(fileID: try serverID(id), users: users, adding: true)
    }

    /// Takes users off a private file's ``FilePermissions/sharedWith``.
    @discardableResult
    public func unshare(_ id: String, from users: [String]) async throws -> FileMetadata {
        try await client.api.shareFile(fileID: try serverID(id), users: users, adding: false)
    }

    /// Replaces a file's permissions: `FilePermissions(access: .private)` keeps it to its uploader and the admins,
    /// ``FilePermissions/project`` opens it to the project again. The uploader's and the admins' to do.
    @discardableResult
    public func setPermissions(_ id: String, _ permissions: FilePermissions) async throws -> FileMetadata {
        try await client.api.updateFile(fileID: try serverID(id), FileUpdate(permissions: permissions))
    }

    /// Makes a file readable without a token at `/v1/public/files/{id}`, or private again.
    @discardableResult
    public func setPublic(_ id: String, _ isPublic: Bool) async throws -> FileMetadata {
        try await client.api.updateFile(fileID: try serverID(id), FileUpdate(public: isPublic))
    }

    /// Deletes a file, offline too, like a record change: the record field showing it is cleared at once by a
    /// patch queued like any other, the file leaves the cache, and the next sync's push deletes it on the server
    /// (before the patch is sent). The deletion survives restarts; a file the server no longer has counts as
    /// deleted; a refusal puts it in ``failedDeletions()``.
    ///
    /// A file whose upload has not completed is not sent at all: its upload is cancelled, its local copy removed,
    /// and the field cleared (nothing goes to the server for the file).
    ///
    /// ```swift
    /// try await client.files.delete(note.photo, detachFrom: FileAttachment(collection: "notes", id: "n-1", field: "photo"))
    /// try await client.sync()   // now, or whenever the device is online again
    /// ```
    ///
    /// - Parameters:
    ///   - id: a server id, or the local id ``upload(from:name:contentType:tags:public:attachTo:source:permissions:)`` returned.
    ///   - detachFrom: the record field to clear; when `nil`, every local record field holding the file. A field
    ///     that holds another file is left as it is.
    /// - Throws: `not_found` for a local id this device does not know; `invalid_argument` for a field that is not a
    ///   `file` field.
    public func delete(_ id: String, detachFrom: FileAttachment? = nil) async throws {
        try client.checkOpen()
        switch try client.store.files.queueFileDeletion(id, detachFrom: detachFrom) {
        case .cancelledUpload(let job):
            await forgetUpload(job)
        case .queued(let fileID):
            try await client.fileCache.remove(fileID)
        }
        client.noteLocalWrite()
    }

    /// File deletions waiting for a sync, oldest first.
    public func pendingDeletions() throws -> [FileDeletion] { try client.store.files.fileDeletions(in: [.queued]) }

    /// File deletions the server refused (the file stays on the server; its field stays cleared), oldest first:
    /// ``retry(_:)`` or ``discard(_:)`` them by file id.
    public func failedDeletions() throws -> [FileDeletion] { try client.store.files.fileDeletions(in: [.failed]) }

    /// The server id of `id`: itself, or the server id of a completed upload's local id.
    public func serverID(_ id: String) throws -> String {
        guard id.hasPrefix(LocalFiles.localFilePrefix) else { return id }
        guard let job = try client.store.files.fileUpload(localID: id), job.state == .completed, let serverID = job.serverID else {
            throw CairnError(.fileNotReady, "The upload \(id) has not completed yet: the server does not know the file")
        }
        return serverID
    }
}

/// A file upload queued on this device.
public struct PendingFile: Sendable, Hashable, Identifiable {
    /// The local id ``CairnFiles/upload(from:name:contentType:tags:public:attachTo:source:permissions:)`` returned.
    public var id: String
    /// The file's name.
    public var name: String
    /// Its size in bytes.
    public var size: Int64
    /// Its MIME type.
    public var contentType: String
    /// Its tags.
    public var tags: [String]
    /// The record field it is attached to.
    public var attachTo: FileAttachment?
    /// Where it stands.
    public var state: FileUploadState
    /// The server's id, once the server made its slot.
    public var serverID: String?
    /// Failed attempts so far.
    public var attempts: Int
    /// Why the last attempt failed, or why it stopped.
    public var error: ErrorBody?
    /// When it was queued.
    public var createdAt: Date

    init(_ job: FileUploadJob) {
        id = job.localID
        name = job.name
        size = job.size
        contentType = job.contentType
        tags = job.tags
        attachTo = job.attachTo
        state = job.state
        serverID = job.serverID
        attempts = job.attempts
        error = job.error
        createdAt = job.createdAt
    }
}

extension CairnError {
    /// A kept file that could not be read or written: its own error when it has one (`store_corrupted`,
    /// `key_required`), else `store_failed`.
    static func storeFile(_ id: String, _ error: any Error) -> CairnError {
        if let error = error as? CairnError { return error }
        return CairnError(.storeFailed, "The kept file \(id) could not be read", cause: error)
    }
}
