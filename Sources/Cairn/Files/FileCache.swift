import CairnProtocol
import Crypto
import Foundation
import Synchronization

/// The files kept on this device: downloads on demand into `cache/`, checked against the server's SHA-256,
/// resumed with `Range` after a broken connection, and evicted least-recently-used beyond
/// ``CairnConfiguration/fileCacheBytes``. Pinned files and the copies of pending uploads are never evicted.
/// Downloads run in the client's ``BackgroundWork``, so closing the client ends them.
actor FileCache {
    let store: LocalStore
    let api: RemoteAPI
    let folder: FileFolder
    let configuration: CairnConfiguration
    let work: BackgroundWork
    /// The downloads under way, by file id, with the other callers waiting for each.
    private var downloads: [String: [CheckedContinuation<URL, any Error>]] = [:]
    /// The downloads the status shows.
    private let progress: TransferProgress

    init(store: LocalStore, api: RemoteAPI, folder: FileFolder, configuration: CairnConfiguration, status: StatusCenter, work: BackgroundWork) {
        self.store = store
        self.api = api
        self.folder = folder
        self.configuration = configuration
        self.work = work
        progress = TransferProgress(status: status)
    }

    /// The local file for `id`: a pending upload's copy (local ids), a cached download, or a new download.
    func url(for id: String) async throws -> URL {
        if id.hasPrefix(LocalFiles.localFilePrefix) {
            guard let job = try store.files.fileUpload(localID: id) else {
                throw CairnError(.notFound, "No upload with the local id \(id) is known on this device")
            }
            if job.state != .completed || job.serverID == nil { return folder.url(job.path) }
            return try await url(for: job.serverID!)
        }
        if let path = try store.files.cachedFile(id) {
            let url = folder.url(path)
            if FileManager.default.fileExists(atPath: url.path) { return url }
            _ = try store.files.uncacheFile(id)
        }
        return try await fetch(id, metadata: nil)
    }

    /// Downloads `id` unless kept, when it fits beside the unpinned files already kept (a prefetch never evicts
    /// for itself); false when it does not fit.
    func prefetch(_ id: String) async throws -> Bool {
        if try isCached(id) { return true }
        let metadata = try await api.fileMetadata(fileID: id)
        let used = try store.files.cacheTotals()
        guard used.bytes - used.pinnedBytes + metadata.size <= configuration.fileCacheBytes else { return false }
        _ = try await fetch(id, metadata: metadata)
        return true
    }

    /// One download per file at a time: a second caller waits for the first.
    private func fetch(_ id: String, metadata: FileMetadata?) async throws -> URL {
        if downloads[id] != nil { return try await withCheckedThrowingContinuation { downloads[id]?.append($0) } }
        downloads[id] = []
        progress.begin(id)
        let result: Result<URL, any Error>
        do { result = .success(try await work.perform { try await self.download(id, metadata: metadata) }) } catch { result = .failure(error) }
        // Whether it succeeded or failed, the download leaves the status.
        await progress.end(id)
        for waiter in downloads.removeValue(forKey: id) ?? [] { waiter.resume(with: result) }
        return try result.get()
    }

    /// Whether the file is on this device now (no download needed).
    func isCached(_ id: String) throws -> Bool {
        if id.hasPrefix(LocalFiles.localFilePrefix) { return try store.files.fileUpload(localID: id) != nil }
        return try store.files.cachedFile(id).map { FileManager.default.fileExists(atPath: folder.url($0).path) } ?? false
    }

    /// Downloads into `cache/ID.partial` (resuming what an earlier attempt left), checks the bytes against the
    /// SHA-256 of the file's metadata, then keeps it and evicts what no longer fits.
    private func download(_ id: String, metadata known: FileMetadata?) async throws -> URL {
        guard Names.isValidID(id) else { throw CairnError.invalid("\(id) is not a file id") }
        let metadata: FileMetadata
        if let known { metadata = known } else { metadata = try await api.fileMetadata(fileID: id) }
        guard metadata.status == .completed else {
            throw CairnError(.fileNotReady, "File \(id) is \(metadata.status.rawValue) on the server: only completed files download")
        }
        try folder.prepare()
        let partial = folder.cache.appendingPathComponent(id + ".partial")
        let finished = folder.cache.appendingPathComponent(id)
        let sealing = folder.writeSealing
        if FileManager.default.fileExists(atPath: partial.path), SealedFile.isSealed(partial) != (sealing != nil) {
            // Begun before the store was encrypted or decrypted: start again in the store's present form.
            try? FileManager.default.removeItem(at: partial)
        }
        // A broken connection is tried again from what the file holds by then, never from where it began.
        let (offset, hasher, response) = try await configuration.retry.run(on: configuration.clock, retries: \.isRetryable) {
            var offset = (try? KeptFileWriter.resumableLength(of: partial, sealing: sealing)) ?? 0
            if offset > metadata.size {
                try? FileManager.default.removeItem(at: partial)
                offset = 0
            }
            let start = offset
            let reporter = ProgressReporter { [work] received in
                work.start { await self.report(id, bytes: start + received, total: metadata.size) }
            }
            // The bytes are hashed as they arrive: no second read of a large file. A resumed download hashes what was
            // kept first.
            let hasher = StreamingSHA256()
            if offset == metadata.size { return (offset, hasher, TransportResponse(status: 206, headers: [], body: Data())) }
            if offset > 0 { try Self.hash(try folder.reader(partial, length: offset), into: hasher) }
            let response = try await api.downloadFile(
                fileID: id, from: offset, to: partial, sealing: sealing, timeout: configuration.fileTransferTimeout,
                progress: reporter.report, received: { bytes in hasher.update(bytes) })
            return (offset, hasher, response)
        }
        await report(id, bytes: metadata.size, total: metadata.size)
        var hash = hasher.finalize()
        if response.status == 200, offset > 0 {
            // The server sent the whole file (it ignored the range): what was kept came first and must go.
            try Self.dropPrefix(offset, of: partial, in: folder)
            hash = try Self.sha256(try folder.reader(partial))
        } else if offset == metadata.size {
            hash = try Self.sha256(try folder.reader(partial))
        }
        if let expected = metadata.sha256, hash != expected {
            try? FileManager.default.removeItem(at: partial)
            throw CairnError(.checksumMismatch, "The downloaded bytes of \(id) do not hash to the server's SHA-256; download again", isRetryable: true)
        }
        try? FileManager.default.removeItem(at: finished)
        try FileManager.default.moveItem(at: partial, to: finished)
        try store.files.cacheFile(id, path: "cache/" + id, size: metadata.size, pinned: false)
        try evict(keeping: id)
        return finished
    }

    /// A completed upload's copy becomes the cached file of its server id: no download needed on this device.
    func adoptUpload(_ job: FileUploadJob, serverID: String) {
        let source = folder.url(job.path)
        let destination = folder.cache.appendingPathComponent(serverID)
        do {
            try folder.prepare()
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: source, to: destination)
            try store.files.cacheFile(serverID, path: "cache/" + serverID, size: job.size, pinned: false)
            try evict(keeping: serverID)
        } catch {
            // The copy stays where it was; the file downloads when asked for.
        }
    }

    /// Evicts the least recently used unpinned files beyond the bound.
    func evict(keeping: String? = nil) throws {
        for path in try store.files.evictFiles(toFit: configuration.fileCacheBytes, keeping: keeping) {
            try? FileManager.default.removeItem(at: folder.url(path))
        }
    }

    /// Removes a file from the cache.
    func remove(_ id: String) throws {
        if let path = try store.files.uncacheFile(id) { try? FileManager.default.removeItem(at: folder.url(path)) }
    }

    private func report(_ id: String, bytes: Int64, total: Int64) async {
        await progress.report(id, FileTransfer(direction: .download, name: id, bytes: bytes, totalBytes: max(total, bytes)))
    }

    /// Lowercase hex SHA-256 of the clear bytes `reader` gives, read in 1 MB chunks.
    static func sha256(_ reader: KeptFileReader) throws -> String {
        var hasher = SHA256()
        while let chunk = try reader.next(upTo: 1 << 20) { hasher.update(data: chunk) }
        return Hex.encode(hasher.finalize())
    }

    /// Feeds the clear bytes `reader` gives to `hasher`.
    static func hash(_ reader: KeptFileReader, into hasher: StreamingSHA256) throws {
        while let chunk = try reader.next(upTo: 1 << 20) { chunk.withUnsafeBytes { hasher.update($0) } }
    }

    /// Removes the first `count` bytes of a kept file, rewriting it beside itself and renaming it over.
    static func dropPrefix(_ count: Int64, of url: URL, in folder: FileFolder) throws {
        let trimmed = url.appendingPathExtension("trim")
        try? FileManager.default.removeItem(at: trimmed)
        let reader = try folder.reader(url, offset: count)
        let writer = try KeptFileWriter(trimmed, sealing: folder.writeSealing)
        defer { try? writer.close() }
        try writer.copy(from: reader)
        try FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: trimmed, to: url)
    }
}

/// A SHA-256 fed from any task, chunk by chunk.
final class StreamingSHA256: Sendable {
    private let state = Mutex(SHA256())

    func update(_ bytes: UnsafeRawBufferPointer) { state.withLock { $0.update(bufferPointer: bytes) } }

    /// The lowercase hex digest of everything fed.
    func finalize() -> String { Hex.encode(state.withLock { $0.finalize() }) }
}
