import CairnProtocol
import Foundation
import GRDB

extension CairnClient {
    /// A report on the store's sync state, for a support ticket: see ``Diagnostics``. Works offline.
    ///
    /// ```swift
    /// let report = try await client.diagnostics()
    /// try report.jsonText().write(to: ticketURL, atomically: true, encoding: .utf8)
    /// ```
    public func diagnostics() async throws -> Diagnostics {
        try checkOpen()
        let now = configuration.wallClock.now()
        let status = await self.status()
        let store = self.store
        let facts = try DiagnosticsFacts.read(store)
        let failedUploads = try store.uploads.failedOperations().map {
            Diagnostics.FailedUpload(collection: $0.collection, id: $0.recordID, operation: $0.kind.rawValue, error: $0.error, failedAt: $0.failedAt)
        }
        let failedFiles = try files.failedUploads().map { Diagnostics.FailedFile(localID: $0.id, name: $0.name, size: $0.size, error: $0.error) }
        // A run cancelled on purpose (Ctrl-C, a background step's expiry) is not a failure of the store.
        let history = try store.history.entries(limit: 20).filter { !($0.error?.hasPrefix("\(ErrorCode.cancelled.rawValue):") ?? false) }
        // The history is in the order the runs started (its id is taken at the start): the newest run that ended is
        // the one judged, even when an older run, begun during an outage, ended after it.
        let (verdict, explanation) = Diagnostics.judge(
            failedUploads: failedUploads, failedFiles: failedFiles, lastRun: history.first { $0.endedAt != nil }, scheduler: status.scheduler,
            queueDepth: facts.queueDepth, pendingFiles: status.pendingFiles, needsPull: facts.collections.filter(\.needsPull).map(\.name),
            lastPull: facts.collections.compactMap(\.lastPull).max(), outOfSpace: storeDiskIsFull)
        return Diagnostics(
            generatedAt: now, verdict: verdict, explanation: explanation,
            server: configuration.serverURL.absoluteString, project: configuration.project, user: configuration.credentials.user,
            schemaVersion: store.schema?.version ?? "",
            collections: facts.collections.map { collection in
                Diagnostics.Collection(
                    name: collection.name, cursor: collection.cursor, lastPull: collection.lastPull,
                    lastPullAgeSeconds: collection.lastPull.map { Self.age(of: $0, at: now) }, firstPullCompleted: collection.firstPullDone,
                    rows: collection.rows, partial: collection.partial)
            },
            queueDepth: facts.queueDepth, oldestPendingAgeSeconds: facts.oldestPending.map { Self.age(of: $0, at: now) },
            failedUploads: failedUploads, pendingFiles: status.pendingFiles, failedFiles: failedFiles,
            recentErrors: history.compactMap { entry in
                entry.error.map { Diagnostics.RecentError(at: entry.endedAt ?? entry.startedAt, kind: entry.kind.rawValue, message: $0) }
            },
            lastSuccess: history.first { $0.endedAt != nil && $0.error == nil }?.endedAt ?? status.lastSyncCompleted,
            lastUpload: status.lastUpload, lastDownload: status.lastDownload, lastUploadRate: status.lastUploadRate,
            lastDownloadRate: status.lastDownloadRate,
            liveConnected: status.scheduler.liveConnected, scheduler: status.scheduler.phase, nextScheduledAction: status.scheduler.nextWake,
            nextScheduledActionDescription: status.scheduler.nextAction)
    }
}

extension CairnClient {
    /// Seconds from `date` to `now`, never negative: a device clock set back after `date` was written reads as 0.
    static func age(of date: Date, at now: Date) -> TimeInterval { max(0, now.timeIntervalSince(date)) }

    /// Whether the disk that holds the store file has almost no room left (under 256 KB: less than a page of
    /// pulled records takes); false for a store in memory, or when the system does not say.
    var storeDiskIsFull: Bool {
        guard case .file(let path) = configuration.store,
            let free = (try? FileManager.default.attributesOfFileSystem(forPath: (path as NSString).deletingLastPathComponent))?[.systemFreeSize]
                as? NSNumber
        else { return false }
        return free.int64Value < 256 * 1024
    }
}

/// The store's side of a diagnostics report, read in one transaction.
struct DiagnosticsFacts {
    struct CollectionFacts {
        var name: String
        var cursor: String?
        var lastPull: Date?
        var firstPullDone: Bool
        var needsPull: Bool
        var rows: Int
        var partial: Bool
    }

    var collections: [CollectionFacts]
    var queueDepth: Int
    var oldestPending: Date?

    static func read(_ store: LocalStore) throws -> DiagnosticsFacts {
        try store.writer.read { db in try read(db, store: store) }
    }

    static func read(_ db: Database, store: LocalStore) throws -> DiagnosticsFacts {
        var collections: [CollectionFacts] = []
        for name in (store.schema?.collections.map(\.name) ?? []) {
            let state = try store.collectionStates.state(db, name)
            let table = try store.table(name)
            collections.append(CollectionFacts(
                name: name, cursor: state.cursor, lastPull: try store.collectionStates.lastPull(db, name), firstPullDone: state.firstPullDone,
                needsPull: state.needsPull, rows: try table.rowCount(db), partial: try store.downloadQueries.isPartial(db, name)))
        }
        return DiagnosticsFacts(collections: collections, queueDepth: try store.queue.count(db), oldestPending: try store.queue.oldestCreatedAt(db))
    }
}
