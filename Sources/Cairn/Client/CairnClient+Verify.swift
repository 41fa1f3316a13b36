import CairnProtocol
import Foundation

/// The outcome of ``CairnClient/verify(_:)``.
public struct Verification: Sendable, Hashable {
    /// The collection compared.
    public var collection: String
    /// Live records on the server.
    public var serverCount: Int
    /// Live records in this store, as last synced (pending local changes do not count).
    public var localCount: Int
    /// The server's SHA-256 over its live `(id, version)` pairs in id order (PROTOCOL.md's digest).
    public var serverDigest: String
    /// The same digest over this store's pairs.
    public var localDigest: String
    /// True when this replica holds exactly the server's record states.
    public var matches: Bool { serverDigest == localDigest && serverCount == localCount }
}

extension CairnClient {
    /// Proves this replica equal to the server: pulls the collection, then compares digests of the live
    /// `(id, version)` pairs on both sides (local pending changes are not counted: the server state they build on is).
    public func verify(_ collection: String) async throws -> Verification {
        try checkOpen()
        _ = try store.collection(collection)
        var attempt = 0
        while true {
            attempt += 1
            try await pull([collection])
            let server = try await api.digest(collection: collection)
            // A write can land between the pull and the digest: pull once more and compare again.
            try await pull([collection])
            let local = CollectionDigest(pairs: try store.serverPairs(collection))
            let result = Verification(collection: collection, serverCount: server.count, localCount: local.count,
                                      serverDigest: server.digest, localDigest: local.value)
            if result.matches || attempt >= 3 { return result }
        }
    }
}
