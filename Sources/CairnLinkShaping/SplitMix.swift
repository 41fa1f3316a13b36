/// A small, seedable random generator (SplitMix64), so a failing randomized test can be replayed from its seed.
public struct SplitMix: RandomNumberGenerator, Sendable {
    var state: UInt64
    /// A generator whose whole sequence follows from `seed`: print the seed of a failing randomized test to replay it.
    public init(seed: UInt64) { state = seed }
    /// The next 64 random bits of the SplitMix64 sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in 0..<1.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// A number in 0..<bound.
    public mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
