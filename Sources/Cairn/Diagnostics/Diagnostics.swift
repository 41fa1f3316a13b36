import CairnProtocol
import Foundation

/// Everything a support ticket needs about one store, in one value: per-collection download state, the upload queue,
/// failed uploads and files with the server's errors, recent errors, the live connection and the scheduler, and a
/// verdict in words. It holds ids, counts, times and error messages, never record data or secrets, so its JSON
/// (``jsonText()``) can be attached to a ticket as it is.
///
/// ```swift
/// let report = try await client.diagnostics()
/// print(report.verdict.rawValue, report.explanation)   // "stuck", "2 uploads were refused by the server: ..."
/// ```
public struct Diagnostics: Sendable, Codable, Hashable {
    /// The store's state in one word.
    public enum Verdict: String, Sendable, Codable, Hashable {
        /// Nothing waits for upload, and no sync failed since the last success.
        case upToDate = "up-to-date"
        /// Changes or files wait for the next sync.
        case waiting
        /// The last sync failed (the server unreachable, say); it is tried again.
        case retrying
        /// The server refused uploads: they wait in the failed list for the app or the user.
        case stuck
    }

    /// One collection's download state.
    public struct Collection: Sendable, Codable, Hashable {
        /// The collection.
        public var name: String
        /// The opaque cursor the next pull continues from (`nil`: a fresh snapshot comes next).
        public var cursor: String?
        /// When its last page was applied.
        public var lastPull: Date?
        /// Seconds since then, when it was ever pulled.
        public var lastPullAgeSeconds: Double?
        /// Whether a full pull ever completed.
        public var firstPullCompleted: Bool
        /// Rows of its local table.
        public var rows: Int
        /// Whether it is pulled through download queries only.
        public var partial: Bool
    }

    /// A refused upload: what it was, not its data.
    public struct FailedUpload: Sendable, Codable, Hashable {
        /// The record's collection.
        public var collection: String
        /// The record's id.
        public var id: String
        /// `create`, `update`, `patch` or `delete`.
        public var operation: String
        /// The server's error, with its details.
        public var error: ErrorBody
        /// When it was refused.
        public var failedAt: Date
    }

    /// A file upload that stopped.
    public struct FailedFile: Sendable, Codable, Hashable {
        /// The upload's local id.
        public var localID: String
        /// The file's name.
        public var name: String
        /// Its size in bytes.
        public var size: Int64
        /// Why it stopped.
        public var error: ErrorBody?
    }

    /// A sync that failed, from the history.
    public struct RecentError: Sendable, Codable, Hashable {
        /// When it ended.
        public var at: Date
        /// `sync`, `push` or `pull`.
        public var kind: String
        /// The error's code and message.
        public var message: String
    }

    /// When the report was made (the configured wall clock).
    public var generatedAt: Date
    /// The verdict.
    public var verdict: Verdict
    /// Why, in one sentence.
    public var explanation: String
    /// The server the store syncs with.
    public var server: String
    /// The project.
    public var project: String
    /// The user whose data the store holds.
    public var user: String
    /// The schema's version, as the server named it (empty if none).
    public var schemaVersion: String
    /// Per collection, by name.
    public var collections: [Collection]
    /// Local changes waiting for upload.
    public var queueDepth: Int
    /// Seconds since the oldest of them was made.
    public var oldestPendingAgeSeconds: Double?
    /// Uploads the server refused.
    public var failedUploads: [FailedUpload]
    /// File uploads queued or running.
    public var pendingFiles: Int
    /// File uploads that stopped.
    public var failedFiles: [FailedFile]
    /// The latest failed syncs, newest first.
    public var recentErrors: [RecentError]
    /// When the last sync ended well.
    public var lastSuccess: Date?
    /// When the last upload and the last download completed, remembered across relaunches.
    public var lastUpload: Date?
    public var lastDownload: Date?
    /// The rates the last push (operations per second) and the last pull (records per second) measured.
    public var lastUploadRate: Double?
    public var lastDownloadRate: Double?
    /// Whether the live-notice connection is open.
    public var liveConnected: Bool
    /// The scheduler's state (`not-running` without ``CairnClient/run()``).
    public var scheduler: SchedulerStatus.Phase
    /// When the scheduler plans to act next, if time alone will make it.
    public var nextScheduledAction: Date?
    /// What it plans to do then.
    public var nextScheduledActionDescription: String?

    /// The report as pretty-printed JSON, for a support ticket.
    public func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The verdict and why, from the facts gathered. `lastPull` is when a pulled page last committed: a failed run
    /// that a later pull superseded, with nothing left to upload, is history, not the store's state (the run that
    /// healed it may have been cancelled on purpose after its pages committed, and cancelled runs are not judged).
    static func judge(
        failedUploads: [FailedUpload], failedFiles: [FailedFile], lastRun: SyncHistoryEntry?, scheduler: SchedulerStatus,
        queueDepth: Int, pendingFiles: Int, needsPull: [String], lastPull: Date? = nil, outOfSpace: Bool = false
    ) -> (Verdict, String) {
        if outOfSpace || lastRun?.error?.hasPrefix("\(ErrorCode.storageFull.rawValue):") == true {
            return (.stuck, "the device is out of space: the store cannot take what syncs bring; free some space and syncs resume"
                + (queueDepth > 0 ? " (\(queueDepth) changes wait, kept)" : ""))
        }
        if let first = failedUploads.first {
            return (.stuck, "\(failedUploads.count) upload\(failedUploads.count == 1 ? " was" : "s were") refused by the server "
                + "(first: \(first.operation) \(first.collection)/\(first.id): \(first.error.code.rawValue), \(first.error.message)); "
                + "retry or discard them")
        }
        if let first = failedFiles.first {
            return (.stuck, "\(failedFiles.count) file upload\(failedFiles.count == 1 ? "" : "s") stopped (first: \(first.name): "
                + "\(first.error.map { "\($0.code.rawValue), \($0.message)" } ?? "no error recorded")); retry or discard them")
        }
        let superseded = queueDepth == 0 && lastRun?.endedAt.map { ended in lastPull.map { $0 > ended } ?? false } == true
        if scheduler.phase == .retrying || (lastRun?.error != nil && !superseded) {
            let message = lastRun?.error ?? "the last sync failed"
            return (.retrying, "the last sync failed: \(message)" + (queueDepth > 0 ? "; \(queueDepth) changes wait" : ""))
        }
        if queueDepth > 0 || pendingFiles > 0 {
            var parts: [String] = []
            if queueDepth > 0 { parts.append("\(queueDepth) change\(queueDepth == 1 ? "" : "s")") }
            if pendingFiles > 0 { parts.append("\(pendingFiles) file\(pendingFiles == 1 ? "" : "s")") }
            let syncer = scheduler.phase == .otherProcess ? " (another process that shares the store syncs it)" : ""
            return (.waiting, parts.joined(separator: " and ") + " wait for the next sync" + syncer)
        }
        if !needsPull.isEmpty {
            return (.waiting, "\(needsPull.joined(separator: ", ")) wait\(needsPull.count == 1 ? "s" : "") for a pull")
        }
        return (.upToDate, "every change is uploaded and every collection pulled")
    }
}
