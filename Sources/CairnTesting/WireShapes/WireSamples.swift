import CairnProtocol
import Foundation

/// Random wire values for property tests, from a seed: the same seed gives the same values on every run, so a failure
/// names the seed and sample that reproduce it. Values are valid as PROTOCOL.md means them (an integral number is an
/// `.integer`, a tombstone has no data, a `gone` marker only its id and version) and reach for the edges: escapes
/// and control characters, characters beyond the BMP, combining marks, the largest and smallest numbers, nesting,
/// absent optionals.
///
/// ```swift
/// var samples = WireSamples(seed: 1)
/// let record = samples.record()
/// ```
public struct WireSamples: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose values are fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// SplitMix64's next value.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// True with probability `chance`.
    public mutating func flip(_ chance: Double = 0.5) -> Bool { Double.random(in: 0..<1, using: &self) < chance }

    /// One of `choices`.
    public mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &self)] }

    // MARK: Values

    /// Characters that writers must escape or carry through untouched.
    private static let pieces: [String] = [
        "a", "Z", "0", " ", "-", "_", ".", ":", "/", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{C}", "\u{1F}",
        "\u{7F}", "é", "e\u{301}", "ß", "ĳ", "Ω", "中", "文", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFD}", "😀", "👩‍👩‍👧",
        "🏳️‍🌈", "\u{10FFFF}", "{", "}", "[", "]", ",", "null", "true", "\\u0041", "</script>",
    ]

    /// A string of up to `maximumLength` pieces, empty now and then.
    public mutating func string(maximumLength: Int = 8) -> String {
        let count = Int.random(in: 0...maximumLength, using: &self)
        var text = ""
        for _ in 0..<count { text += flip(0.4) ? String(UnicodeScalar(UInt8.random(in: 0x61...0x7A, using: &self))) : pick(Self.pieces) }
        return text
    }

    /// An integer, often at an edge.
    public mutating func integer() -> Int64 {
        flip(0.3)
            ? pick([0, 1, -1, Int64.max, Int64.min, Int64(Int32.max) + 1, 1 << 53, (1 << 53) + 1, 999_999_999_999_999, -1_000_000_000_000_000])
            : Int64.random(in: Int64.min...Int64.max, using: &self) >> Int64.random(in: 0...63, using: &self)
    }

    /// A number that is not an integer fitting `Int64` (those are ``integer()``s): fractions, the smallest and largest
    /// doubles.
    public mutating func number() -> Double {
        if flip(0.3) {
            return pick([0.5, -0.25, 0.1, 1.0 / 3, Double.leastNonzeroMagnitude, -2.2250738585072014e-308, 1.7976931348623157e308, -9.3e18, 1e300, 123456.789e-20])
        }
        let value = Double.random(in: -1e6...1e6, using: &self) * pow(10, Double(Int.random(in: -20...20, using: &self)))
        return JSONValue.number(value).integerValue == nil ? value : 0.75
    }

    /// Any JSON value, nested up to `depth` more levels.
    public mutating func json(depth: Int = 3) -> JSONValue {
        switch Int.random(in: 0...(depth > 0 ? 7 : 5), using: &self) {
        case 0: return .null
        case 1: return .bool(flip())
        case 2: return .integer(integer())
        case 3: return .number(number())
        case 4, 5: return .string(string())
        case 6: return .array((0..<Int.random(in: 0...4, using: &self)).map { _ in json(depth: depth - 1) })
        default: return .object(object(depth: depth - 1))
        }
    }

    /// A JSON object with up to five members, nested up to `depth` more levels.
    public mutating func object(depth: Int = 3) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &self) { members[string(maximumLength: 4)] = json(depth: depth) }
        return members
    }

    /// A commit time that reads back as itself from its RFC 3339 text (what the wire carries), or `nil` now and then.
    public mutating func date() -> Date? {
        guard flip(0.85) else { return nil }
        let milliseconds = Int64.random(in: 0...4_102_444_800_000, using: &self)  // 1970 to 2100
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        // A time whose text needs nanoseconds can read back one unit in the last place away; whole seconds never do.
        guard let read = RFC3339.date(from: RFC3339.string(from: date)), read == date else {
            return Date(timeIntervalSince1970: Double(milliseconds / 1000))
        }
        return date
    }

    // MARK: Wire shapes

    /// A record: live (with data, maybe empty) or a tombstone (without).
    public mutating func record() -> Record {
        let deleted = flip(0.25)
        return Record(
            id: string(), version: integer(), updatedAt: date(), updatedBy: flip(0.85) ? string() : nil, deleted: deleted,
            data: deleted ? [:] : object())
    }

    /// A feed change: a live record, a tombstone, or a `gone` marker.
    public mutating func change() -> Change {
        switch Int.random(in: 0...5, using: &self) {
        case 0: return Change(id: string(), version: integer(), gone: true)
        case 1: return Change(id: string(), version: integer(), updatedAt: date(), updatedBy: flip(0.85) ? string() : nil, deleted: true)
        default: return Change(id: string(), version: integer(), updatedAt: date(), updatedBy: flip(0.85) ? string() : nil, data: object())
        }
    }

    /// An operation: a delete without data, a write with data (maybe empty), with or without a base version.
    public mutating func operation() -> SyncOperation {
        let op = pick(OperationKind.allCases)
        return SyncOperation(
            opId: string(), collection: string(), id: string(), op: op, baseVersion: flip(0.7) ? integer() : nil,
            data: op == .delete ? nil : object())
    }

    /// An error object, with details now and then.
    public mutating func error() -> ErrorBody {
        ErrorBody(
            code: pick([.validationFailed, .idempotencyMismatch, .batchAborted, .conflict, ErrorCode(string())]), message: string(),
            details: flip(0.4) ? object(depth: 1) : nil)
    }

    /// A batch result: applied with its record, a conflict with the current state, or rejected with its error.
    public mutating func result() -> OperationResult {
        switch pick(["applied", "conflict", "rejected"]) {
        case "applied": return .applied(string(), record())
        case "conflict": return .conflict(string(), current: record())
        default: return .rejected(string(), error())
        }
    }

    /// A batch of up to six operations, atomic or not.
    public mutating func batch() -> BatchRequest {
        BatchRequest(atomic: flip(), operations: (0..<Int.random(in: 0...6, using: &self)).map { _ in operation() })
    }
}
