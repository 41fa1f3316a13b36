import CairnProtocol
import Foundation
import GRDB

/// What deleting a file did on this device.
enum QueuedFileDeletion: Sendable {
    /// The file's upload had not completed: it was cancelled (its local copy is the caller's to remove), and
    /// nothing goes to the server for the file.
    case cancelledUpload(FileUploadJob)
    /// The server file's deletion is queued for the next sync.
    case queued(fileID: String)
}

/// The local side of file deletions: queued like record changes, with the record field cleared at once.
extension LocalFiles {
    /// Deletes the file `id` (a server id, or the local id of an upload) in one transaction: an upload that has not
    /// completed is cancelled; a server file's deletion is queued. The record field showing the file (`detachFrom`,
    /// else every local record field holding it) is cleared by a patch queued like any local change.
    func queueFileDeletion(_ id: String, detachFrom given: FileAttachment?) throws -> QueuedFileDeletion {
        try store.writer.write { db in
            var job = try store.fileUploads.job(db, localID: id)
            if id.hasPrefix(LocalFiles.localFilePrefix), job == nil {
                throw CairnError(.notFound, "No upload with the local id \(id) is known on this device")
            }
            if let upload = job, upload.state != .completed || upload.serverID == nil {
                try discardFileUpload(db, upload)
                // The field went back to what it held before the upload: cleared, unless it was already empty.
                if let target = given ?? upload.attachTo { try clearFileField(db, target, holding: nil) }
                return .cancelledUpload(upload)
            }
            job = try job ?? store.fileUploads.job(db, serverID: id)
            let fileID = job?.serverID ?? id
            if let upload = job {
                // The field must not show the completed upload again.
                try store.fileUploads.settle(db, localIDs: [upload.localID])
            }
            let values = [fileID] + (job.map { [$0.localID] } ?? [])
            for target in try given.map({ [$0] }) ?? fileHolders(db, values) { try clearFileField(db, target, holding: values) }
            try store.fileDeletions.insert(db, fileID: fileID, at: store.now)
            return .queued(fileID: fileID)
        }
    }

    /// Clears a record's file field with a queued patch, when it holds one of `values` (any value when `nil`).
    private func clearFileField(_ db: Database, _ target: FileAttachment, holding values: [String]?) throws {
        let table = try store.table(target.collection)
        guard table.schema.fields.contains(where: { $0.name == target.field && $0.type == .file }) else {
            throw CairnError.invalid("\(target.field) is not a file field of \(target.collection)")
        }
        guard let row = try table.row(db, id: target.id), let current = row.data[target.field], !current.isNull else { return }
        if let values, !values.contains(where: { current == .string($0) }) { return }
        _ = try store.write(db, collection: target.collection, id: target.id, change: .patch([target.field: .null]))
    }

    /// The local record fields holding one of `values`, in every collection with `file` fields.
    private func fileHolders(_ db: Database, _ values: [String]) throws -> [FileAttachment] {
        let names = (store.schema?.collections.map(\.name) ?? []) + store.localCollections.sorted()
        let list = JSONValue.array(values.map { .string($0) }).jsonText()
        var holders: [FileAttachment] = []
        for name in names {
            guard let table = try? store.table(name) else { continue }
            for field in table.fileFields {
                let sql = "SELECT id FROM \(table.quotedName) WHERE \(field.quotedDatabaseIdentifier) IN (SELECT value FROM json_each(?))"
                for id in try String.fetchAll(db, sql: sql, arguments: [list]) { holders.append(FileAttachment(collection: name, id: id, field: field)) }
            }
        }
        return holders
    }

    /// Deletions in `states`, oldest first.
    func fileDeletions(in states: [FileUploadState]) throws -> [FileDeletion] {
        try store.writer.read { db in try store.fileDeletions.deletions(db, in: states) }
    }

    /// Whether the deletion of `fileID` is queued or failed: the file is gone for this device.
    func isFileDeleted(_ fileID: String) throws -> Bool { try store.writer.read { db in try store.fileDeletions.contains(db, fileID: fileID) } }

    /// Forgets a deletion the server did (or a file it does not know).
    func finishFileDeletion(_ fileID: String) throws {
        try store.writeBookkeeping { db in _ = try store.fileDeletions.remove(db, fileID: fileID) }
    }

    /// Counts a failed attempt of a deletion.
    func noteFileDeletionAttempt(_ fileID: String, error: ErrorBody) throws {
        try store.writeBookkeeping { db in try store.fileDeletions.noteAttempt(db, fileID: fileID, error: error) }
    }

    /// Moves a deletion to the failed list.
    func failFileDeletion(_ fileID: String, error: ErrorBody) throws {
        try store.writeBookkeeping { db in try store.fileDeletions.fail(db, fileID: fileID, error: error) }
    }

    /// Queues a failed deletion again; false when none has this file id.
    func retryFileDeletion(_ fileID: String) throws -> Bool { try store.writer.write { db in try store.fileDeletions.retry(db, fileID: fileID) } }

    /// Drops a queued or failed deletion (the file stays on the server; the cleared field stays cleared).
    func discardFileDeletion(_ fileID: String) throws -> Bool { try store.writer.write { db in try store.fileDeletions.remove(db, fileID: fileID) } }
}
