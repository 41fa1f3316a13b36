import Crypto
import Foundation

/// A digest of a collection's live records, computed the same way by client and server over their
/// `(id, version)` pairs: equal digests prove two replicas hold the same record states.
///
/// The digest is the SHA-256, in lowercase hex, of one line `id<TAB>version<LF>` per live record in ascending
/// byte order of `id`.
///
/// ```swift
/// let digest = CollectionDigest(pairs: [("n-1", 4), ("n-2", 7)])
/// digest.value  // "5c1f..."
/// ```
public struct CollectionDigest: Sendable, Hashable {
    /// How many live records the digest covers (tombstones are not counted).
    public var count: Int
    /// The SHA-256 in lowercase hex: 64 characters, compared with ``DigestResponse/digest``.
    public var value: String

    /// The digest of `pairs`, which need not be sorted.
    public init(pairs: [(String, Int64)]) {
        var builder = Builder()
        for (id, version) in pairs.sorted(by: { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }) { builder.add(id: id, version: version) }
        self = builder.digest
    }

    /// A digest built one record at a time, in ascending byte order of `id`, without holding the records: a server
    /// digests a collection of millions of records as it reads them.
    ///
    /// ```swift
    /// var builder = CollectionDigest.Builder()
    /// builder.add(id: "n-1", version: 4)
    /// builder.add(id: "n-2", version: 7)
    /// builder.digest == CollectionDigest(pairs: [("n-2", 7), ("n-1", 4)])   // true
    /// ```
    public struct Builder: Sendable {
        private var hasher = SHA256()
        private var count = 0

        /// An empty digest.
        public init() {}

        /// Adds one live record; ids must come in ascending byte order.
        public mutating func add(id: String, version: Int64) {
            hasher.update(data: Data("\(id)\t\(version)\n".utf8))
            count += 1
        }

        /// The digest of the records added.
        public var digest: CollectionDigest { CollectionDigest(count: count, value: Hex.encode(hasher.finalize())) }
    }

    private init(count: Int, value: String) {
        self.count = count
        self.value = value
    }
}

/// The answer of `GET /v1/projects/{project}/collections/{collection}/digest`.
public struct DigestResponse: Codable, Sendable, Hashable {
    /// A cursor at the version the digest was taken at: pull up to it before comparing.
    public var cursor: String
    /// How many live records the digest covers (tombstones are not counted).
    public var count: Int
    /// The hex SHA-256 of the sorted `(id, version)` lines.
    public var digest: String

    /// Creates the digest answer from a snapshot's cursor and its ``CollectionDigest`` count and value.
    public init(cursor: String, count: Int, digest: String) {
        self.cursor = cursor
        self.count = count
        self.digest = digest
    }
}
