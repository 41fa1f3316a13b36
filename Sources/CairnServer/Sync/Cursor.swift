import Foundation

/// The changes feed's opaque cursor: the last version handed out and, during a snapshot, the head version at the
/// snapshot's start. Clients must not read it; its text form may change between server versions.
struct FeedCursor: Equatable, Sendable {
    var since: Int64
    var snapshotHigh: Int64?

    /// The text sent to clients.
    var token: String {
        let plain = snapshotHigh.map { "s1.\(since).\($0)" } ?? "d1.\(since)"
        return Data(plain.utf8).base64URLEncodedString
    }

    /// Reads a cursor a client sent back; `nil` when it is not one of ours.
    init?(token: String) {
        guard token.utf8.count <= 200 else { return nil }
        guard let data = Data(base64URLEncoded: token), let plain = String(data: data, encoding: .utf8) else { return nil }
        let parts = plain.split(separator: ".", omittingEmptySubsequences: false)
        switch (parts.first, parts.count) {
        case ("d1", 2):
            guard let since = Int64(parts[1]), since >= 0 else { return nil }
            self.init(since: since, snapshotHigh: nil)
        case ("s1", 3):
            guard let since = Int64(parts[1]), let high = Int64(parts[2]), since >= 0, high >= 0 else { return nil }
            self.init(since: since, snapshotHigh: since >= high ? nil : high)
        default:
            return nil
        }
    }

    init(since: Int64, snapshotHigh: Int64?) {
        self.since = since
        self.snapshotHigh = snapshotHigh
    }
}
