import Foundation

extension CairnFiles {
    /// Queues bytes held in memory for upload (HAT's upload of `Data`), as ``upload(from:name:contentType:tags:public:attachTo:source:permissions:)``
    /// does a file: the bytes are kept in the store's folder first, so the upload survives a relaunch.
    ///
    /// ```swift
    /// let id = try client.files.upload(data: jpeg, name: "site.jpg", contentType: "image/jpeg",
    ///                                  attachTo: FileAttachment(collection: "inspections", id: "i-1", field: "photo"))
    /// for await transfer in await client.files.progress(id) { print(transfer.fraction) }
    /// ```
    ///
    /// - Returns: the upload's local id.
    public func upload(
        data: Data, name: String, contentType: String? = nil, tags: [String] = [], public isPublic: Bool = false, attachTo: FileAttachment? = nil,
        source: String? = nil, permissions: FilePermissions = .project
    ) throws -> String {
        let staging = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-upload-\(UUID().uuidString)")
        do {
            try data.write(to: staging)
        } catch {
            throw CairnError(.storeFailed, "the bytes of \(name) could not be staged for upload", cause: error)
        }
        defer { try? FileManager.default.removeItem(at: staging) }
        return try upload(
            from: staging, name: name, contentType: contentType, tags: tags, public: isPublic, attachTo: attachTo, source: source,
            permissions: permissions)
    }

    /// The progress of one transfer, by the local id of an upload or the server id of a download: each change while
    /// it runs, ending when it ends (at once when it is not queued nor running).
    public func progress(_ id: String) async -> AsyncStream<FileTransfer> {
        let updates = await client.statusUpdates()
        // An upload still queued starts later; anything else that is not running now is over.
        let queued: @Sendable () -> Bool = { [self] in ((try? upload(id)) ?? nil)?.state == .queued }
        return AsyncStream { continuation in
            let task = Task {
                var seen = false
                for await status in updates {
                    if let transfer = status.fileTransfers[id] {
                        seen = true
                        continuation.yield(transfer)
                    } else if seen || !queued() {
                        break
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
