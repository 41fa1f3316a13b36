import CairnProtocol
import Foundation
import GRDB

/// The versions this store's own accepted writes committed at, per collection (`cairn_collections.own_versions`):
/// sent with the next pull of changes (`own=`), so that the feed does not send back states the store holds already
/// (the batch answer gave their versions). Noted with the acknowledgement, in its transaction; forgotten once a pull
/// that sent them reached the end of the feed, which is past them.
extension CollectionStateTable {
    /// The most ranges kept per collection: older ones drop (their states would only come back once more).
    static let ownRangesKept = 64

    /// Its part of migration 10.
    static func addOwnVersionsV10(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE cairn_collections ADD COLUMN own_versions TEXT")
    }

    /// Notes the versions of own writes the server accepted, per collection.
    func noteOwn(_ db: Database, versions: [String: [Int64]]) throws {
        for (collection, list) in versions where !list.isEmpty {
            var ranges = try state(db, collection).own ?? VersionRanges()
            for version in list.sorted() where version > 0 { ranges.insert(version...version) }
            try storeOwn(db, collection, ranges.newest(Self.ownRangesKept))
        }
    }

    /// Forgets the own versions up to `version`: a pull that sent them reached the end of the feed.
    func forgetOwn(_ db: Database, _ collection: String, through version: Int64) throws {
        guard let ranges = try state(db, collection).own else { return }
        try storeOwn(db, collection, ranges.dropping(through: version))
    }

    private func storeOwn(_ db: Database, _ collection: String, _ ranges: VersionRanges) throws {
        try db.cachedStatement(sql: "UPDATE cairn_collections SET own_versions = ? WHERE name = ?")
            .execute(arguments: [ranges.isEmpty ? nil : ranges.text, collection])
    }
}
