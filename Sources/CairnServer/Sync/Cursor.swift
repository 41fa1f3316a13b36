import Foundation

/// The changes feed's opaque cursor: the last version handed out and, during a snapshot, the head version at the
/// snapshot's start. Under data rules it also names what the reader could read when it was issued (``scope``), and,
/// while a pull catches up with a change of that (``previousScope``), what it could read before. Clients must not
/// read it; its text form may change between server versions.
struct FeedCursor: Equatable, Sendable {
    var since: Int64
    var snapshotHigh: Int64?
    /// The fingerprint of the reader's read filter (``RecordScope/readFingerprint``); `nil`: it read everything.
    var scope: String? = nil
    /// During a catch-up after ``scope`` changed, up to ``snapshotHigh``: the fingerprint the reader's copy was
    /// pulled under (`nil`: everything).
    var previousScope: String? = nil
    /// True while catching up with a change of scope (``previousScope`` then names the old one).
    var isRescoping: Bool = false

    /// The text sent to clients.
    var token: String {
        let plain: String
        if scope == nil && !isRescoping {
            plain = snapshotHigh.map { "s1.\(since).\($0)" } ?? "d1.\(since)"
        } else if isRescoping, let high = snapshotHigh {
            plain = "r2.\(since).\(high).\(scope ?? "-").\(previousScope ?? "-")"
        } else {
            plain = snapshotHigh.map { "s2.\(since).\($0).\(scope ?? "-")" } ?? "d2.\(since).\(scope ?? "-")"
        }
        return Data(plain.utf8).base64URLEncodedString
    }

    /// Reads a cursor a client sent back; `nil` when it is not one of ours.
    init?(token: String) {
        guard token.utf8.count <= 200 else { return nil }
        guard let data = Data(base64URLEncoded: token), let plain = String(data: data, encoding: .utf8) else { return nil }
        let parts = plain.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func number(_ index: Int) -> Int64? { Int64(parts[index]).flatMap { $0 >= 0 ? $0 : nil } }
        func fingerprint(_ index: Int) -> String?? {
            let text = parts[index]
            if text == "-" { return .some(nil) }
            guard text.utf8.count == 32, text.utf8.allSatisfy(Hex.isDigit) else { return nil }
            return .some(text)
        }
        switch (parts.first, parts.count) {
        case ("d1", 2):
            guard let since = number(1) else { return nil }
            self.init(since: since, snapshotHigh: nil)
        case ("s1", 3):
            guard let since = number(1), let high = number(2) else { return nil }
            self.init(since: since, snapshotHigh: since >= high ? nil : high)
        case ("d2", 3):
            guard let since = number(1), let scope = fingerprint(2) else { return nil }
            self.init(since: since, snapshotHigh: nil, scope: scope)
        case ("s2", 4):
            guard let since = number(1), let high = number(2), let scope = fingerprint(3) else { return nil }
            self.init(since: since, snapshotHigh: since >= high ? nil : high, scope: scope)
        case ("r2", 5):
            guard let since = number(1), let high = number(2), let scope = fingerprint(3), let previous = fingerprint(4) else { return nil }
            self.init(since: since, snapshotHigh: since >= high ? nil : high, scope: scope, previousScope: previous, isRescoping: since < high)
        default:
            return nil
        }
    }

    init(since: Int64, snapshotHigh: Int64?, scope: String? = nil, previousScope: String? = nil, isRescoping: Bool = false) {
        self.since = since
        self.snapshotHigh = snapshotHigh
        self.scope = scope
        self.previousScope = isRescoping ? previousScope : nil
        self.isRescoping = isRescoping && snapshotHigh != nil
    }
}
