import CairnProtocol
import Foundation
import Logging

/// What the SDK tells the app's logger (``CairnConfiguration/logger``), in one place: each message, its level and its
/// metadata. Messages name collections, record ids, operation ids, error codes and counts, never record data, tokens,
/// passwords or keys; record data appears only in request traces with ``CairnConfiguration/traceWithData``.
///
/// Levels: `info` for each finished sync and schema change, `notice` for conflicts and retries, `warning` for failed
/// syncs and refused changes, `debug` for each step (batches pushed, pages pulled, the live connection) and for
/// request traces.
struct SyncLog: Sendable {
    var logger: Logger

    /// The configuration's logger, with the project and device in every message's metadata.
    init(_ configuration: CairnConfiguration) {
        var logger = configuration.logger
        logger[metadataKey: "cairn.project"] = "\(configuration.project)"
        logger[metadataKey: "cairn.device"] = "\(configuration.device)"
        self.logger = logger
    }

    init(logger: Logger) { self.logger = logger }

    /// A log that goes nowhere.
    static let off = SyncLog(logger: Logger(label: "cairn", factory: { _ in SwiftLogNoOpLogHandler() }))

    func syncStarted(_ kind: SyncKind) {
        logger.debug("sync started", metadata: ["cairn.sync": "\(kind.rawValue)"])
    }

    func syncCompleted(_ kind: SyncKind, _ summary: SyncSummary, after elapsed: Duration) {
        logger.info("sync completed", metadata: [
            "cairn.sync": "\(kind.rawValue)", "cairn.pushed": "\(summary.pushed)", "cairn.pulled": "\(summary.pulled)",
            "cairn.conflicts": "\(summary.conflicts)", "cairn.refused": "\(summary.failed)", "cairn.ms": "\(elapsed.milliseconds)",
        ])
    }

    func syncFailed(_ kind: SyncKind, _ error: CairnError, after elapsed: Duration) {
        logger.warning("sync failed", metadata: [
            "cairn.sync": "\(kind.rawValue)", "cairn.error": "\(error.code.rawValue)", "cairn.reason": "\(error.message)",
            "cairn.retryable": "\(error.isRetryable)", "cairn.ms": "\(elapsed.milliseconds)",
        ])
    }

    /// The scheduler will try a failed sync again after `delay`.
    func syncRetryScheduled(failures: Int, in delay: Duration) {
        logger.notice("sync will be retried", metadata: ["cairn.failures": "\(failures)", "cairn.delay_ms": "\(delay.milliseconds)"])
    }

    /// A request failed with a retryable error and is sent again after `delay`.
    func requestRetried(_ method: String, _ path: String, attempt: Int, in delay: Duration, cause: CairnError) {
        logger.notice("request retried", metadata: [
            "cairn.request": "\(method) \(Self.pathOnly(path))", "cairn.attempt": "\(attempt)", "cairn.delay_ms": "\(delay.milliseconds)",
            "cairn.error": "\(cause.code.rawValue)", "cairn.reason": "\(cause.message)",
        ])
    }

    func batchPushed(operations: Int, applied: Int, refused: Int, conflicts: Int) {
        logger.debug("batch pushed", metadata: [
            "cairn.operations": "\(operations)", "cairn.applied": "\(applied)", "cairn.refused": "\(refused)", "cairn.conflicts": "\(conflicts)",
        ])
    }

    /// The server applied none of a change set (its operations are logged as refused one by one too); the set is now
    /// one entry of the failed list.
    func changeSetRefused(_ changeSet: String, operations: Int, cause: ErrorBody) {
        logger.warning("change set refused", metadata: [
            "cairn.changeSet": "\(changeSet)", "cairn.operations": "\(operations)", "cairn.error": "\(cause.code.rawValue)",
            "cairn.reason": "\(cause.message)",
        ])
    }

    /// The server refused a queued change; it is now in the failed list.
    func changeRefused(_ operation: PendingOperation, _ error: ErrorBody) {
        logger.warning("change refused", metadata: [
            "cairn.collection": "\(operation.collection)", "cairn.id": "\(operation.recordID)", "cairn.op": "\(operation.opId)",
            "cairn.kind": "\(operation.kind.rawValue)", "cairn.error": "\(error.code.rawValue)", "cairn.reason": "\(error.message)",
        ])
    }

    /// The server refused a queued file deletion; it is now in the failed list of files.
    func fileDeletionRefused(_ fileID: String, _ error: ErrorBody) {
        logger.warning("file deletion refused", metadata: [
            "cairn.file": "\(fileID)", "cairn.error": "\(error.code.rawValue)", "cairn.reason": "\(error.message)",
        ])
    }

    func conflictResolved(collection: String, id: String, resolution: ResolutionKind) {
        logger.notice("conflict resolved", metadata: [
            "cairn.collection": "\(collection)", "cairn.id": "\(id)", "cairn.resolution": "\(resolution.rawValue)",
        ])
    }

    func pagePulled(collection: String, changes: Int) {
        logger.debug("page pulled", metadata: ["cairn.collection": "\(collection)", "cairn.changes": "\(changes)"])
    }

    func schemaChanged(_ collections: [String]) {
        logger.info("schema changed", metadata: ["cairn.collections": "\(collections.joined(separator: ","))"])
    }

    func liveConnection(open: Bool, cause: (any Error)? = nil) {
        var metadata: Logger.Metadata = [:]
        if let cause { metadata["cairn.error"] = "\(CairnError(wrapping: cause).code.rawValue)" }
        logger.debug(open ? "live connection opened" : "live connection closed", metadata: metadata)
    }

    /// A path without its query string (which may carry filter values).
    static func pathOnly(_ path: String) -> String {
        path.firstIndex(of: "?").map { String(path[..<$0]) } ?? path
    }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whole milliseconds, for log metadata.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
