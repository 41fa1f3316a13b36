import CairnProtocol
import Crypto
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
    /// The server's HMAC of the cursor for one reader of one collection (``signed(with:for:)``); `nil` in cursors from
    /// before Cairn signed them.
    var signature: String? = nil
    /// The signed text as the client sent it back (what its signature covers).
    private var signedText: String? = nil

    /// The text sent to clients: the plain cursor, then its signature.
    var token: String {
        Data((signature.map { "\(plain).\($0)" } ?? plain).utf8).base64URLEncodedString
    }

    /// This cursor signed for `reader` (project, collection and user), so that the server knows it issued it to them.
    func signed(with key: SymmetricKey, for reader: String) -> FeedCursor {
        var signed = self
        signed.signature = Self.signature(plain, key: key, reader: reader)
        return signed
    }

    /// Whether the cursor carries the server's signature for `reader`.
    func isSigned(with key: SymmetricKey, for reader: String) -> Bool {
        guard let signature else { return false }
        return signature == Self.signature(signedText ?? plain, key: key, reader: reader)
    }

    private static func signature(_ plain: String, key: SymmetricKey, reader: String) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Data("\(plain)\n\(reader)".utf8), using: key).prefix(16))
    }

    /// The cursor's fields, as dot-separated text.
    private var plain: String {
        let plain: String
        if scope == nil && !isRescoping {
            plain = snapshotHigh.map { "s1.\(since).\($0)" } ?? "d1.\(since)"
        } else if isRescoping, let high = snapshotHigh {
            plain = "r2.\(since).\(high).\(scope ?? "-").\(previousScope ?? "-")"
        } else {
            plain = snapshotHigh.map { "s2.\(since).\($0).\(scope ?? "-")" } ?? "d2.\(since).\(scope ?? "-")"
        }
        return plain
    }

    /// Reads a cursor a client sent back; `nil` when it is not one of ours.
    init?(token: String) {
        guard token.utf8.count <= 300 else { return nil }
        guard let data = Data(base64URLEncoded: token), let plain = String(data: data, encoding: .utf8) else { return nil }
        var parts = plain.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let fieldCounts = ["d1": 2, "s1": 3, "d2": 3, "s2": 4, "r2": 5]
        var signature: String?
        if let first = parts.first, let count = fieldCounts[first], parts.count == count + 1 {
            let last = parts.removeLast()
            guard last.utf8.count == 32, last.utf8.allSatisfy(Hex.isDigit) else { return nil }
            signature = last
        }
        let signedText = parts.joined(separator: ".")
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
        self.signature = signature
        self.signedText = signature == nil ? nil : signedText
    }

    init(since: Int64, snapshotHigh: Int64?, scope: String? = nil, previousScope: String? = nil, isRescoping: Bool = false) {
        self.since = since
        self.snapshotHigh = snapshotHigh
        self.scope = scope
        self.previousScope = isRescoping ? previousScope : nil
        self.isRescoping = isRescoping && snapshotHigh != nil
    }
}
