import Foundation
import GRDB

/// What a store remembers of its last syncs across relaunches (SAP's `lastDownloadTime`, `lastUploadTime` and time
/// estimates): when the last push and pull completed and the rates they measured, in `cairn_meta`.
struct SyncFacts: Sendable, Hashable {
    var lastUpload: Date?
    var lastDownload: Date?
    /// Operations per second.
    var uploadRate: Double?
    /// Records per second.
    var downloadRate: Double?

    /// The facts the store holds.
    static func read(_ db: Database, _ meta: MetaTable) throws -> SyncFacts {
        func number(_ key: MetaTable.Key) throws -> Double? { try meta.value(db, key).flatMap(Double.init) }
        return SyncFacts(
            lastUpload: try number(.lastUpload).map(Date.init(timeIntervalSince1970:)),
            lastDownload: try number(.lastDownload).map(Date.init(timeIntervalSince1970:)),
            uploadRate: try number(.uploadRate), downloadRate: try number(.downloadRate))
    }

    /// Stores the facts that are set, keeping the others as they were.
    func save(_ db: Database, _ meta: MetaTable) throws {
        if let lastUpload { try meta.set(db, .lastUpload, String(lastUpload.timeIntervalSince1970)) }
        if let lastDownload { try meta.set(db, .lastDownload, String(lastDownload.timeIntervalSince1970)) }
        if let uploadRate { try meta.set(db, .uploadRate, String(uploadRate)) }
        if let downloadRate { try meta.set(db, .downloadRate, String(downloadRate)) }
    }

    /// Puts the facts that are set into a status.
    func apply(to status: inout SyncStatus) {
        if let lastUpload { status.lastUpload = lastUpload }
        if let lastDownload { status.lastDownload = lastDownload }
        if let uploadRate { status.lastUploadRate = uploadRate }
        if let downloadRate { status.lastDownloadRate = downloadRate }
    }
}
