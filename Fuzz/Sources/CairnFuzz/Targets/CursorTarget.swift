import CairnProtocol
import Crypto
import Foundation

/// `cursor`: the changes feed's cursor, read from the input as a token and as the plain text inside one. A cursor
/// that reads writes back to a token that reads to the same fields, and that token is stable; its fields keep their
/// invariants; a cursor signed for a reader verifies for that reader only.
enum CursorTarget {
    static let key = SymmetricKey(data: Array(repeating: UInt8(7), count: 32))

    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        check(text)
        check(Data(bytes).base64URLEncodedString)
    }

    static func check(_ token: String) {
        guard let cursor = FeedCursor(token: token) else { return }
        require(cursor.since >= 0 && (cursor.snapshotHigh.map { cursor.since < $0 } ?? true), "\(token) reads to a cursor out of order")
        require(!cursor.isRescoping || cursor.snapshotHigh != nil, "\(token) rescopes without a snapshot")
        require(cursor.isRescoping || cursor.previousScope == nil, "\(token) has a previous scope without rescoping")
        let written = cursor.token
        guard let again = FeedCursor(token: written) else { return require(false, "\(token) writes back as \(written), which does not read") }
        require(again.since == cursor.since && again.snapshotHigh == cursor.snapshotHigh && again.scope == cursor.scope
                && again.previousScope == cursor.previousScope && again.isRescoping == cursor.isRescoping && again.signature == cursor.signature,
                "\(token) writes back as \(written), which reads to other fields")
        require(again.token == written, "the token \(written) is not stable")
        let signed = cursor.signed(with: key, for: "p/notes/alice")
        guard let read = FeedCursor(token: signed.token) else { return require(false, "a signed cursor of \(token) does not read") }
        require(read.isSigned(with: key, for: "p/notes/alice"), "a cursor signed for alice does not verify: \(token)")
        require(!read.isSigned(with: key, for: "p/notes/bob"), "a cursor signed for alice verifies for bob: \(token)")
    }
}
