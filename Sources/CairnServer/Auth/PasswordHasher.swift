import HummingbirdBcrypt
import NIOPosix

/// Hashes and checks passwords with bcrypt, on NIO's thread pool: a hash takes tens of milliseconds of CPU, which
/// would otherwise hold a thread of Swift's cooperative pool (and every task waiting for one) at each sign-in.
public struct PasswordHasher: Sendable {
    /// The bcrypt cost (work factor); 10 takes ~70 ms here. Tests may lower it (minimum 4).
    public var cost: UInt8

    /// A hasher with this bcrypt cost, clamped to 4...31.
    public init(cost: UInt8 = 10) { self.cost = max(4, min(cost, 31)) }

    /// A new bcrypt hash of `password`.
    ///
    /// ```swift
    /// let hash = try await PasswordHasher().hash("correct horse")
    /// ```
    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// True when `password` matches `hash`.
    public func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }
}
