import CairnProtocol
import Foundation

/// Download and apply progress of one collection in the current or last pull. Counts only grow during a pull.
public struct CollectionProgress: Sendable, Hashable {
    /// Changes received.
    public var downloadedRecords: Int = 0
    /// Bytes received.
    public var downloadedBytes: Int = 0
    /// Changes applied to the local store.
    public var appliedRecords: Int = 0
    /// True once the collection's first full pull completed (its data is complete from then on).
    public var firstPullCompleted: Bool = false
}

/// What the client is doing, and what waits.
public struct SyncStatus: Sendable, Hashable {
    /// The sync phase.
    public enum Phase: String, Sendable, Hashable {
        case idle, connecting, pushing, pulling
    }

    /// What the client is doing now: `idle` between syncs.
    public var phase: Phase = .idle
    /// Per-collection progress of the current or last pull.
    public var collections: [String: CollectionProgress] = [:]
    /// Per download query (``CairnClient/createDownloadQuery(name:collection:filter:prefetchFiles:)``), by name: what its pulls
    /// received and applied, and whether its first pull completed.
    public var downloadQueries: [String: CollectionProgress] = [:]
    /// What the scheduler of ``CairnClient/run()`` is doing.
    public var scheduler = SchedulerStatus()
    /// The collections the last schema change created or gave new fields (SAP's `changedEntitySets`).
    public var changedCollections: [String] = []
    /// Local changes waiting for upload (survives restarts: read from the store).
    public var pendingUploads: Int = 0
    /// Uploads the server rejected, kept for the app.
    public var failedUploads: Int = 0
    /// When the last sync started (the configured wall clock).
    public var lastSyncStarted: Date?
    /// When the last sync ended without an error.
    public var lastSyncCompleted: Date?
    /// When the last upload finished (remembered by the store across relaunches).
    public var lastUpload: Date?
    /// When the last download finished (remembered by the store across relaunches).
    public var lastDownload: Date?
    /// The rate the last push measured, in operations per second (remembered across relaunches): a push's
    /// ``upload`` estimate has a time left from it before its first batch is answered.
    public var lastUploadRate: Double?
    /// The rate the last pull measured, in records per second (remembered across relaunches): a snapshot's
    /// ``download`` estimate has a time left from it as soon as its size is known.
    public var lastDownloadRate: Double?
    /// The last sync's error, if it failed.
    public var lastError: ErrorBody?
    /// File uploads queued or running (survives restarts: read from the store).
    public var pendingFiles: Int = 0
    /// File uploads that stopped, kept for the app: ``CairnFiles/failedUploads()``.
    public var failedFiles: Int = 0
    /// The running upload's progress and time left (nil when no push runs).
    public var upload: TransferEstimate?
    /// The running download's progress and time left, for the collection or download query being pulled (nil when
    /// no pull runs).
    public var download: TransferEstimate?
    /// File transfers under way, by file: the local id of an upload, the server id of a download.
    public var fileTransfers: [String: FileTransfer] = [:]

    /// The progress of every file transfer under way together, from 0 to 1; `nil` when none runs.
    public var fileProgress: Double? {
        guard !fileTransfers.isEmpty else { return nil }
        let total = fileTransfers.values.reduce(Int64(0)) { $0 + $1.totalBytes }
        let moved = fileTransfers.values.reduce(Int64(0)) { $0 + $1.bytes }
        return total > 0 ? Double(moved) / Double(total) : 0
    }
}

extension SyncStatus {
    /// Shows `transfer` of the file `id`, unless the status shows it further along already: each progress report
    /// runs in a task of its own, and one that arrives after a later one must not move the progress back.
    mutating func noteFileTransfer(_ id: String, _ transfer: FileTransfer) {
        if let shown = fileTransfers[id], shown.direction == transfer.direction, shown.bytes > transfer.bytes { return }
        fileTransfers[id] = transfer
    }
}

/// One file moving between this device and the server.
public struct FileTransfer: Sendable, Hashable {
    /// Which way the bytes go.
    public enum Direction: String, Sendable, Hashable {
        case upload, download
    }

    /// Which way the bytes go.
    public var direction: Direction
    /// The file's name (uploads) or id (downloads).
    public var name: String
    /// Bytes the server has (uploads) or this device has (downloads).
    public var bytes: Int64
    /// The file's size.
    public var totalBytes: Int64

    /// The progress from 0 to 1.
    public var fraction: Double { totalBytes > 0 ? min(1, Double(bytes) / Double(totalBytes)) : 1 }

    /// A transfer at `bytes` of `totalBytes`.
    public init(direction: Direction, name: String, bytes: Int64, totalBytes: Int64) {
        self.direction = direction
        self.name = name
        self.bytes = bytes
        self.totalBytes = totalBytes
    }
}

/// Something that happened during sync, for apps that react to events.
public enum SyncEvent: Sendable, Hashable {
    case started
    case completed(SyncSummary)
    case failed(ErrorBody)
    /// A collection's first full pull completed: its data is complete.
    case firstPullCompleted(collection: String)
    /// The server's schema changed these collections (new ones, or new fields: their columns are filled from the
    /// records already stored, with no new download).
    case schemaChanged(collections: [String])
    /// A conflict was resolved.
    case conflictResolved(collection: String, id: String, resolution: ResolutionKind)
}

/// What one sync did.
public struct SyncSummary: Sendable, Hashable {
    /// Operations the server applied.
    public var pushed: Int = 0
    /// Changes pulled.
    public var pulled: Int = 0
    /// Conflicts resolved.
    public var conflicts: Int = 0
    /// Operations the server rejected (now in the failed list).
    public var failed: Int = 0
    /// Queued action calls sent and settled (answered or refused; see ``CairnClient/actionResults()``).
    public var actions: Int = 0

    /// Counts `other`'s work in this summary too (the parts of one run done apart, such as collections pulled at once).
    mutating func add(_ other: SyncSummary) {
        pushed += other.pushed
        pulled += other.pulled
        conflicts += other.conflicts
        failed += other.failed
        actions += other.actions
    }
}

/// What a sync run did: ``CairnClient/sync()`` pushes then pulls; ``CairnClient/push()`` and
/// ``CairnClient/pull(_:)`` do one half.
public enum SyncKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Push, then pull.
    case sync
    /// Upload queued changes only.
    case push
    /// Download changes only.
    case pull
}

/// One entry of the persisted sync history.
public struct SyncHistoryEntry: Sendable, Hashable, Identifiable {
    /// The history's own key, increasing with each run.
    public var id: Int64
    /// What the run did.
    public var kind: SyncKind
    /// When the run started (the configured wall clock).
    public var startedAt: Date
    /// When it ended; `nil` while it runs, or when the app stopped during it.
    public var endedAt: Date?
    /// What it did: uploads applied, changes pulled, conflicts resolved, uploads rejected.
    public var summary: SyncSummary
    /// The error message when the run failed.
    public var error: String?

    /// How long the run took.
    public var duration: TimeInterval? { endedAt.map { max(0, $0.timeIntervalSince(startedAt)) } }
}
