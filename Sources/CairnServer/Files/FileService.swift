import CairnProtocol
import Foundation
import NIOCore

/// The rules of files: the three upload steps, limits, attaching a completed file to its record, search and
/// changes, deletion and the sweep of expired uploads. Metadata lives in the storage's ``FileCatalog``, bytes in a
/// ``BlobStore``; routes only translate HTTP.
///
/// ```swift
/// let file = try await files.create(request, project: "field", user: "alice", schema: schema)
/// _ = try await files.upload(project: "field", id: file.id, range: nil, contentLength: nil, body: bytes)
/// let done = try await files.complete(project: "field", id: file.id, user: "alice", schema: schema)
/// ```
struct FileService: Sendable {
    let storage: any ServerStorage
    let blobs: any BlobStore
    /// How an attached file's record field commits, and who hears of it.
    let commits: RecordCommits
    let metrics: ServerMetrics
    let clock: any WallClock
    /// The server's limits, used where a project has none of its own.
    let maximumFileBytes: Int64
    let maximumProjectBytes: Int64
    /// How long a `new` file waits for bytes.
    let uploadExpiry: TimeInterval
    let locks = UploadLocks()

    // MARK: Reading

    /// The file, in any status, or `404 not_found`.
    func file(project: String, id: String) async throws -> StoredFile {
        guard Names.isValidID(id), let file = try await storage.file(project: project, id: id) else { throw ErrorBody.notFound("file \"\(id)\"") }
        return file
    }

    /// The file's metadata as answered, with the bytes received so far.
    func metadata(_ file: StoredFile) async throws -> FileMetadata {
        let offset: Int64
        switch file.status {
        case .completed: offset = file.size
        case .deleted: offset = 0
        case .new: offset = try await blobs.size(project: file.project, id: file.id)
        }
        return FileMetadata(
            id: file.id, name: file.name, contentType: file.contentType, size: file.size, sha256: file.sha256, status: file.status,
            tags: file.tags, public: file.isPublic, createdAt: file.createdAt, updatedAt: file.updatedAt, createdBy: file.createdBy,
            attachTo: file.attachTo, attachedVersion: file.attachedVersion,
            uploadUrl: "/v1/projects/\(file.project)/files/\(file.id)/upload", uploadOffset: offset, expiresAt: file.expiresAt,
            source: file.source, permissions: file.permissions)
    }

    /// The files of `project` matching `query` that `visible` admits, and the id to continue after when the page
    /// is full.
    /// Files `visible` leaves out are skipped and more are read, so a page names no hidden file, not even as `next`.
    func search(
        project: String, query: FileQuery, visible: (StoredFile) async throws -> Bool = { _ in true }
    ) async throws -> FileList {
        var files: [FileMetadata] = []
        var page = query
        while true {
            let found = try await storage.searchFiles(project: project, query: page)
            for file in found where try await visible(file) {
                files.append(try await metadata(file))
                if files.count == query.limit { return FileList(files: files, next: file.id) }
            }
            guard found.count == page.limit, let last = found.last else { return FileList(files: files, next: nil) }
            page.after = last.id
        }
    }

    /// The project's limits: its own, else the server's.
    func limits(project: String) async throws -> (file: Int64, project: Int64) {
        let own = try await storage.fileLimits(project: project)
        return (own.maximumFileBytes ?? maximumFileBytes, own.maximumProjectBytes ?? maximumProjectBytes)
    }

    // MARK: The three steps

    /// Step 1: a `new` file with an empty blob, within the project's limits.
    func create(_ request: NewFileRequest, project: String, user: String, schema: Schema) async throws -> StoredFile {
        let name = try FileRules.name(request.name)
        let contentType = try FileRules.contentType(request.contentType)
        let tags = try FileRules.tags(request.tags ?? [])
        let sha256 = try FileRules.sha256(request.sha256)
        let target = try FileRules.attachment(request.attachTo, schema: schema)
        let source = try FileRules.source(request.source)
        let permissions = try FileRules.permissions(request.permissions ?? .project)
        try FileRules.checkVisibility(isPublic: request.public ?? false, permissions)
        guard request.size >= 0 else { throw ErrorBody.validation("size must be 0 or more", field: "size") }
        let limits = try await limits(project: project)
        guard request.size <= limits.file else {
            throw ErrorBody(
                code: .fileTooLarge, message: "A file in \(project) is at most \(limits.file) bytes; this one is \(request.size)",
                details: ["limit": .integer(limits.file)])
        }
        let now = clock.now()
        let file = StoredFile(
            project: project, id: UUID().uuidString.lowercased(), name: name, contentType: contentType, size: request.size,
            sha256: sha256, status: .new, tags: tags, isPublic: request.public ?? false, createdAt: now, updatedAt: now,
            createdBy: user, attachTo: target, attachedVersion: nil, expiresAt: now + uploadExpiry, source: source, permissions: permissions)
        try await blobs.create(project: project, id: file.id)
        guard try await storage.insertFile(file, projectBytesLimit: limits.project) else {
            try? await blobs.remove(project: project, id: file.id)
            throw ErrorBody(
                code: .quotaExceeded, message: "\(project) may hold at most \(limits.project) bytes of files; delete some first",
                details: ["limit": .integer(limits.project)])
        }
        return file
    }

    /// Step 2: writes a body to the file's blob, whole (`range` nil: from byte 0) or as the chunk `range` names,
    /// which must start at the bytes received so far. Bytes that arrive are kept even when the body breaks off.
    /// - Returns: the file and its upload offset afterwards.
    func upload<Body: AsyncSequence>(
        project: String, id: String, range: ContentRange?, contentLength: Int64?, body: Body
    ) async throws -> (StoredFile, Int64) where Body.Element == ByteBuffer {
        try await locks.withLock(id, busy: Self.busy(id)) {
            var file = try await file(project: project, id: id)
            guard file.status == .new else { throw Self.notNew(file) }
            let received = try await blobs.size(project: project, id: id)
            let start: Int64, limit: Int64
            if let range {
                guard range.total == file.size else {
                    throw ErrorBody.validation("Content-Range total \(range.total) is not the file's size \(file.size)", field: "Content-Range")
                }
                guard let bytes = range.bytes else { return (file, received) }
                guard bytes.lowerBound == received else {
                    throw ErrorBody(
                        code: .offsetMismatch, message: "The chunk starts at \(bytes.lowerBound), but \(received) bytes have arrived: send from there",
                        details: ["uploadOffset": .integer(received)])
                }
                (start, limit) = (received, bytes.upperBound + 1)
            } else {
                (start, limit) = (0, file.size)
            }
            if let contentLength, start + contentLength > limit {
                throw ErrorBody.tooLarge("The body holds \(contentLength) bytes; from byte \(start) on, at most \(limit - start) fit")
            }
            let end: Int64
            var stop: (any Error)?
            do {
                end = try await blobs.write(project: project, id: id, at: start, limit: limit, from: body)
            } catch BlobWriteError.limitExceeded(let kept) {
                (end, stop) = (kept, ErrorBody.tooLarge("The body holds more than the \(limit - start) bytes that fit from byte \(start) on"))
            } catch BlobWriteError.interrupted(let kept, let underlying) {
                (end, stop) = (kept, underlying)
            }
            metrics.fileBytes(in: end - start)
            // Bytes arrived: the upload lives on.
            file.expiresAt = max(file.expiresAt ?? .distantPast, clock.now() + uploadExpiry)
            if try await !storage.replaceFile(file, ifStatus: .new) {
                // Deleted while the bytes arrived.
                try? await blobs.remove(project: project, id: id)
                throw Self.notNew(try await self.file(project: project, id: id))
            }
            if let stop { throw stop }
            return (file, end)
        }
    }

    /// Step 3: checks that every byte arrived and hashes to the declared SHA-256, completes the file, then sets the
    /// record field it is attached to. Completing a completed file answers it again (finishing an attachment a
    /// crash interrupted).
    func complete(project: String, id: String, user: String, schema: Schema) async throws -> StoredFile {
        try await locks.withLock(id, busy: Self.busy(id)) {
            let file = try await file(project: project, id: id)
            switch file.status {
            case .deleted: throw Self.notNew(file)
            case .completed: return file.attachTo != nil && file.attachedVersion == nil ? try await attach(file, user: user, schema: schema) : file
            case .new: break
            }
            let received = try await blobs.size(project: project, id: id)
            guard received == file.size else {
                throw ErrorBody(
                    code: .uploadIncomplete, message: "\(received) of \(file.size) bytes have arrived; send the rest first",
                    details: ["uploadOffset": .integer(received)])
            }
            let hash = try await blobs.sha256(project: project, id: id, size: file.size)
            if let declared = file.sha256, declared != hash {
                // Start over: the bytes are wrong somewhere, and resuming would keep them.
                try await blobs.create(project: project, id: id)
                throw ErrorBody(
                    code: .checksumMismatch,
                    message: "The bytes hash to \(hash), not the declared \(declared); they were discarded: upload again",
                    details: ["expected": .string(declared), "actual": .string(hash)])
            }
            var completed = file
            completed.status = .completed
            completed.sha256 = hash
            completed.expiresAt = nil
            completed.updatedAt = clock.now()
            guard try await storage.replaceFile(completed, ifStatus: .new) else { throw Self.notNew(try await self.file(project: project, id: id)) }
            guard completed.attachTo != nil else { return completed }
            do {
                return try await attach(completed, user: user, schema: schema)
            } catch let error as ErrorBody where error.code == .notFound {
                // Nothing may point at the file yet: it goes back to `new`, to be completed once the record exists.
                _ = try? await storage.replaceFile(file, ifStatus: .completed)
                throw error
            }
        }
    }

    /// Sets the attached record field to the completed file's id, as an ordinary change with a live notice.
    private func attach(_ file: StoredFile, user: String, schema: Schema) async throws -> StoredFile {
        guard let target = file.attachTo, let collection = schema.collection(named: target.collection) else { return file }
        let record = try await RecordWriter.setFields(
            [target.field: .string(file.id)], collection: collection, id: target.id, project: file.project, user: user,
            now: clock.now(), commits: commits)
        var attached = file
        attached.attachedVersion = record.version
        _ = try await storage.replaceFile(attached, ifStatus: .completed)
        return attached
    }

    // MARK: Changes

    /// Renames, retags, publishes, re-sources or changes the permissions of a file that is not deleted.
    func update(project: String, id: String, _ update: FileUpdate) async throws -> StoredFile {
        let name = try update.name.map(FileRules.name)
        let tags = try update.tags.map(FileRules.tags)
        let source = try FileRules.source(update.source)
        let permissions = try update.permissions.map(FileRules.permissions)
        return try await change(project: project, id: id) { file in
            if let name { file.name = name }
            if let tags { file.tags = tags }
            if let isPublic = update.public { file.isPublic = isPublic }
            if let source { file.source = source }
            if let permissions { file.permissions = permissions }
        }
    }

    /// Adds `users` to (`adding`) or removes them from a file's ``FilePermissions/sharedWith``.
    func share(project: String, id: String, users: [String], adding: Bool) async throws -> StoredFile {
        let users = try FileRules.users(users, field: "users")
        return try await change(project: project, id: id) { file in
            let shared = adding ? file.permissions.sharedWith + users.filter { !file.permissions.sharedWith.contains($0) }
                : file.permissions.sharedWith.filter { !users.contains($0) }
            file.permissions.sharedWith = try FileRules.users(shared, field: "users")
        }
    }

    /// Applies `edit` to a file that is not deleted, as a compare-and-set on its status (retried when another
    /// request changed the status meanwhile); a private file that would be public is `validation_failed`.
    private func change(project: String, id: String, _ edit: (inout StoredFile) throws -> Void) async throws -> StoredFile {
        while true {
            var file = try await file(project: project, id: id)
            guard file.status != .deleted else { throw ErrorBody.notFound("file \"\(id)\"") }
            let status = file.status
            try edit(&file)
            try FileRules.checkVisibility(isPublic: file.isPublic, file.permissions)
            file.updatedAt = clock.now()
            // Another request changed the status meanwhile: apply the change to what is there now.
            if try await storage.replaceFile(file, ifStatus: status) { return file }
        }
    }

    /// Marks the file deleted and removes its bytes; deleting a deleted file answers it again.
    func delete(project: String, id: String) async throws -> StoredFile {
        while true {
            var file = try await file(project: project, id: id)
            guard file.status != .deleted else { return file }
            let status = file.status
            file.status = .deleted
            file.expiresAt = nil
            file.updatedAt = clock.now()
            if try await storage.replaceFile(file, ifStatus: status) {
                try await blobs.remove(project: project, id: id)
                return file
            }
        }
    }

    /// Deletes `new` files past their `expiresAt`, rows and bytes, skipping any with a request in flight.
    /// - Returns: how many were deleted.
    @discardableResult
    func sweep() async throws -> Int {
        var removed = 0
        for file in try await storage.expiredFiles(before: clock.now(), limit: 1000) {
            let gone = try? await locks.withLock(file.id, busy: Self.busy(file.id)) {
                guard try await storage.removeNewFile(project: file.project, id: file.id) else { return false }
                try await blobs.remove(project: file.project, id: file.id)
                return true
            }
            if gone == true { removed += 1 }
        }
        return removed
    }

    // MARK: Errors

    static func busy(_ id: String) -> ErrorBody {
        ErrorBody(code: .offsetMismatch, message: "Another request is moving the bytes of file \(id); ask for the offset and try again")
    }

    static func notNew(_ file: StoredFile) -> ErrorBody {
        ErrorBody(code: .fileNotNew, message: "File \(file.id) is \(file.status.rawValue): its bytes can no longer change")
    }
}
