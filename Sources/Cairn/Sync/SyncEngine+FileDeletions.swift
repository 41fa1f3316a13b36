import CairnProtocol
import Foundation

extension SyncEngine {
    /// Sends the queued file deletions, oldest first, before the queued record changes: the server lets a member
    /// delete a file it did not upload only while a record it may write still holds the file, so the deletion goes
    /// before the patch that clears the field. A file the server does not know (`404`) counts as deleted. Offline
    /// stops the push as it would stop the record changes; a refusal moves the deletion to the failed list of
    /// files, and a server error is tried again at the next syncs up to ``CairnConfiguration/maximumFileAttempts``.
    func pushFileDeletions() async throws {
        for deletion in try await store.offPool({ try $0.files.fileDeletions(in: [.queued]) }) {
            try Task.checkCancellation()
            do {
                _ = try await api.deleteFile(fileID: deletion.id)
                try await store.offPool { try $0.files.finishFileDeletion(deletion.id) }
            } catch let error as CairnError where error.code == .notFound && error.httpStatus == 404 {
                try await store.offPool { try $0.files.finishFileDeletion(deletion.id) }
            } catch {
                let failure = CairnError(wrapping: error)
                if failure.code == .cancelled || failure.code == .networkUnavailable || failure.code == .timedOut || Task.isCancelled {
                    throw failure
                }
                let body = ErrorBody(code: failure.code, message: failure.message, details: failure.details)
                if failure.isRetryable, deletion.attempts + 1 < configuration.maximumFileAttempts {
                    try await store.offPool { try $0.files.noteFileDeletionAttempt(deletion.id, error: body) }
                } else {
                    try await store.offPool { try $0.files.failFileDeletion(deletion.id, error: body) }
                    log.fileDeletionRefused(deletion.id, body)
                }
            }
        }
    }
}
