import CairnProtocol
import Foundation

/// A record as the local table shows it.
struct VisibleRow: Sendable {
    var id: String
    var data: [String: JSONValue]
    var version: Int64
    var pending: Bool
    var updatedAt: String?
    var updatedBy: String?

    var record: LocalRecord {
        LocalRecord(id: id, data: data, version: version, hasPendingChanges: pending,
                    updatedAt: updatedAt.flatMap(RFC3339.date(from:)), updatedBy: updatedBy)
    }
}

/// A record as the app reads it: its current local state.
public struct LocalRecord: Sendable, Hashable, Identifiable {
    /// The record's id.
    public var id: String
    /// Its data, local changes included.
    public var data: [String: JSONValue]
    /// The server version the local state is based on (0 for a record never uploaded).
    public var version: Int64
    /// True while local changes to this record wait for upload.
    public var hasPendingChanges: Bool
    /// When the server last committed it.
    public var updatedAt: Date?
    /// Who last committed it on the server.
    public var updatedBy: String?
}
