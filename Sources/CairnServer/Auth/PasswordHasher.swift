import HummingbirdBcrypt

/// Hashes and checks passwords with bcrypt.
public struct PasswordHasher: Sendable {
    /// The bcrypt cost (work factor); 10 takes ~70 ms here. Tests may lower it (minimum 4).
    public var cost: UInt8

    /// A hasher with this bcrypt cost, clamped to 4...31.
    public init(cost: UInt8 = 10) { self.cost = max(4, min(cost, 31)) }

    /// A new bcrypt hash of `password`.
    public func hash(_ password: String) -> String { Bcrypt.hash(password, cost: cost) }

    /// True when `password` matches `hash`.
    public func verify(_ password: String, hash: String) -> Bool { Bcrypt.verify(password, hash: hash) }
}
