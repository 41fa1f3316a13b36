import CairnProtocol
import Foundation
import GRDB

/// The local side of file uploads: durable jobs, the record fields that show a pending file, and pushes that never
/// carry a local file id.
extension LocalFiles {
    /// Queues an upload job in one transaction; with an attachment, the record's field shows the local id at once.
    /// The record must exist locally and the field must be a `file` field.
    func queueFileUpload(_ job: FileUploadJob) throws {
        try store.writer.write { db in
            if let target = job.attachTo {
                let table = try store.table(target.collection)
                guard table.schema.fields.contains(where: { $0.name == target.field && $0.type == .file }) else {
                    throw CairnError.invalid("\(target.field) is not a file field of \(target.collection)")
                }
                guard try table.state(db, id: target.id) != nil else {
                    throw CairnError(.notFound, "\(target.collection)/\(target.id) does not exist: save the record before attaching a file")
                }
            }
            try store.fileUploads.insert(db, job)
            if let target = job.attachTo { try applyFileOverlays(db, table: store.table(target.collection), ids: [target.id]) }
        }
    }

    /// Shows pending and just-completed attachments on the visible rows among `ids`; completed ones whose attachment the row's server state has reached are settled. Costs nothing
    /// for collections without file fields.
    func applyFileOverlays(_ db: Database, table: CollectionTable, ids: some Sequence<String>) throws {
        guard !table.fileFields.isEmpty, try store.fileUploads.hasOverlays(db, collection: table.name) else { return }
        let ids = Set(ids)
        var settled: [String] = []
        for overlay in try store.fileUploads.overlays(db, collection: table.name) where ids.contains(overlay.recordID) {
            guard let row = try table.row(db, id: overlay.recordID) else { continue }
            if overlay.completed, row.version >= overlay.attachedVersion ?? 0 {
                settled.append(overlay.localID)
                continue
            }
            let current = row.data[overlay.field]
            guard current != .string(overlay.value) else { continue }
            if current != .string(overlay.localID) { try store.fileUploads.setUnderlying(db, localID: overlay.localID, current) }
            var data = row.data
            data[overlay.field] = .string(overlay.value)
            try table.upsert(
                db, id: row.id, data: data, version: row.version, updatedAt: row.updatedAt, updatedBy: row.updatedBy)
        }
        try store.fileUploads.settle(db, localIDs: settled)
    }

    /// Removes a job that is not completed; a record field showing it goes back to what it held before.
    func discardFileUpload(localID: String) throws -> FileUploadJob? {
        try store.writer.write { db in
            guard let job = try store.fileUploads.job(db, localID: localID), job.state != .completed else { return nil }
            try discardFileUpload(db, job)
            return job
        }
    }

    /// Removes a job inside the caller's transaction; a record field showing it goes back to what it held before.
    func discardFileUpload(_ db: Database, _ job: FileUploadJob) throws {
        if let target = job.attachTo, let table = try? store.table(target.collection), let row = try table.row(db, id: target.id),
            row.data[target.field] == .string(job.localID)
        {
            let underlying = try store.fileUploads.overlays(db, collection: table.name).first { $0.localID == job.localID }?.underlying
            var data = row.data
            data[target.field] = underlying
            try table.upsert(
                db, id: row.id, data: data, version: row.version, updatedAt: row.updatedAt, updatedBy: row.updatedBy)
        }
        try store.fileUploads.remove(db, localID: job.localID)
    }

    /// Rewrites file fields holding a local file id in operations taken for the first time, and stores the
    /// rewrite (every later attempt sends the same operation): the server id of a completed upload, else the value
    /// the server holds (a patch leaves the field out). The server then sets the field itself when the upload
    /// completes.
    func rewriteLocalFileIDs(_ db: Database, _ operations: [PendingOperation]) throws -> [PendingOperation] {
        var rewritten = operations
        var tables: [String: CollectionTable] = [:]
        for (index, operation) in operations.enumerated() where operation.attempts == 1 && operation.dataText != nil {
            guard let table = tables[operation.collection] ?? (try? store.table(operation.collection)) else { continue }
            tables[operation.collection] = table
            // Most collections have no file field: nothing to look at.
            guard !table.fileFields.isEmpty, var data = operation.data else { continue }
            var changed = false
            for field in table.fileFields {
                guard case .string(let value)? = data[field], value.hasPrefix(LocalFiles.localFilePrefix) else { continue }
                changed = true
                if let serverID = try store.fileUploads.serverID(db, localID: value) {
                    data[field] = .string(serverID)
                } else if operation.kind == .patch {
                    data[field] = nil
                } else {
                    data[field] = try store.shadows.shadow(db, collection: operation.collection, id: operation.recordID)?.serverData?[field]
                }
            }
            guard changed else { continue }
            let newText = JSONValue.object(data).jsonText()
            try store.queue.setData(db, sequence: operation.sequence, dataText: newText)
            rewritten[index].dataText = newText
        }
        return rewritten
    }

    /// Queued jobs whose turn has come: not waiting for a retry, and attached (if at all) to a record the server has.
    /// A job whose record was deleted fails.
    func readyFileUploads(now: Date, retry: RetryPolicy) throws -> [FileUploadJob] {
        // Every sync asks: with nothing queued (the usual case), a read answers without a write transaction.
        guard try store.writer.read({ db in try store.fileUploads.counts(db)[.queued] ?? 0 }) > 0 else { return [] }
        return try store.writer.write { db in
            var ready: [FileUploadJob] = []
            for job in try store.fileUploads.jobs(db, in: [.queued]) where retry.isDue(retryAt: job.nextAttemptAt, now: now) {
                if let target = job.attachTo {
                    guard let table = try? store.table(target.collection), let state = try table.state(db, id: target.id) else {
                        try store.fileUploads.fail(db, localID: job.localID, error: ErrorBody(
                            code: .notFound, message: "\(target.collection)/\(target.id) was deleted before its file was uploaded"))
                        continue
                    }
                    // A record not pushed yet: the file waits for it.
                    if state.version == 0 { continue }
                }
                ready.append(job)
            }
            return ready
        }
    }

    /// The job with this local id.
    func fileUpload(localID: String) throws -> FileUploadJob? { try store.writer.read { db in try store.fileUploads.job(db, localID: localID) } }

    /// Jobs in `states`, oldest first.
    func fileUploads(in states: [FileUploadState]) throws -> [FileUploadJob] { try store.writer.read { db in try store.fileUploads.jobs(db, in: states) } }

    /// Stores the SHA-256 of a job's bytes.
    func setFileSHA256(localID: String, sha256: String) throws {
        try store.writeBookkeeping { db in try store.fileUploads.setSHA256(db, localID: localID, sha256: sha256) }
    }

    /// Notes the server's slot for a job.
    func setFileServerID(localID: String, serverID: String?) throws {
        try store.writeBookkeeping { db in try store.fileUploads.setServerID(db, localID: localID, serverID: serverID) }
    }

    /// Marks a job completed; its record field now shows the server id until a pull brings the server's state.
    func completeFileUpload(localID: String, attachedVersion: Int64?) throws {
        try store.writer.write { db in
            try store.fileUploads.complete(db, localID: localID, attachedVersion: attachedVersion)
            if let target = try store.fileUploads.job(db, localID: localID)?.attachTo, let table = try? store.table(target.collection) {
                try applyFileOverlays(db, table: table, ids: [target.id])
            }
        }
    }

    /// Counts a failed attempt of a job, to retry at `retryAt`.
    func noteFileAttempt(localID: String, error: ErrorBody, retryAt: Date) throws {
        try store.writeBookkeeping { db in try store.fileUploads.noteAttempt(db, localID: localID, error: error, retryAt: retryAt) }
    }

    /// Moves a job to the failed list.
    func failFileUpload(localID: String, error: ErrorBody) throws {
        try store.writeBookkeeping { db in try store.fileUploads.fail(db, localID: localID, error: error) }
    }

    /// Queues a failed job again.
    func retryFileUpload(localID: String) throws -> Bool {
        try store.writer.write { db in try store.fileUploads.retry(db, localID: localID) }
    }

    /// How many jobs are queued and failed.
    func fileUploadCounts() throws -> (pending: Int, failed: Int) {
        try store.writer.read { db in
            let counts = try store.fileUploads.counts(db)
            return (counts[.queued] ?? 0, counts[.failed] ?? 0)
        }
    }
}
