import Foundation

/// What a shaped link is like: its bandwidth each way, its round-trip latency, and how often it drops a connection.
///
/// Written as `cairn bench network --link` takes it: `RATE[/UPRATE],LATENCY[,loss=PERCENT]`, rates in `kbit`,
/// `mbit` or `gbit` per second, the latency a round trip in `ms` or `s`:
///
/// ```swift
/// let cellular = try LinkProfile(parsing: "20mbit,60ms")          // 20 Mbit/s both ways, 60 ms round trip
/// let rural = try LinkProfile(parsing: "5mbit/1mbit,150ms,loss=2%") // slower up than down, 2% of connections dropped
/// ```
public struct LinkProfile: Sendable, Hashable, CustomStringConvertible {
    /// Bits per second from the server to the client.
    public var downBitsPerSecond: Double
    /// Bits per second from the client to the server.
    public var upBitsPerSecond: Double
    /// The round trip a byte's answer takes on an idle link: half of it each way.
    public var roundTrip: Duration
    /// The share of connections (0...1) the link drops part-way through.
    public var connectionLoss: Double

    /// A link of `bitsPerSecond` each way (or `upBitsPerSecond` up) and a `roundTrip` latency.
    public init(bitsPerSecond: Double, upBitsPerSecond: Double? = nil, roundTrip: Duration, connectionLoss: Double = 0) {
        self.downBitsPerSecond = bitsPerSecond
        self.upBitsPerSecond = upBitsPerSecond ?? bitsPerSecond
        self.roundTrip = roundTrip
        self.connectionLoss = connectionLoss
    }

    /// Reads `20mbit,60ms`, `5mbit/1mbit,150ms` or `20mbit,60ms,loss=1%`; throws ``LinkProfileError`` naming what is wrong.
    public init(parsing text: String) throws {
        let parts = text.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2 || parts.count == 3 else { throw LinkProfileError("a link is RATE,LATENCY[,loss=PERCENT], such as 20mbit,60ms, not \(text)") }
        let rates = parts[0].split(separator: "/").map(String.init)
        guard let down = rates.first.flatMap(Self.rate), rates.count <= 2 else { throw LinkProfileError("\(parts[0]) is not a rate such as 20mbit or 5mbit/1mbit") }
        let up = rates.count == 2 ? Self.rate(rates[1]) : down
        guard let up else { throw LinkProfileError("\(rates[1]) is not a rate such as 1mbit") }
        guard let latency = Self.duration(parts[1]) else { throw LinkProfileError("\(parts[1]) is not a latency such as 60ms") }
        var loss = 0.0
        if parts.count == 3 {
            guard parts[2].hasPrefix("loss="), parts[2].hasSuffix("%"), let percent = Double(parts[2].dropFirst(5).dropLast()), (0...100).contains(percent)
            else { throw LinkProfileError("\(parts[2]) is not a loss such as loss=1%") }
            loss = percent / 100
        }
        self.init(bitsPerSecond: down, upBitsPerSecond: up, roundTrip: latency, connectionLoss: loss)
    }

    /// `20mbit/20mbit,60ms`, with `,loss=1%` when it drops connections.
    public var description: String {
        func rate(_ bits: Double) -> String {
            bits >= 1e9 ? "\(Self.number(bits / 1e9))gbit" : bits >= 1e6 ? "\(Self.number(bits / 1e6))mbit" : "\(Self.number(bits / 1e3))kbit"
        }
        let milliseconds = Double(roundTrip.components.seconds) * 1000 + Double(roundTrip.components.attoseconds) / 1e15
        return "\(rate(downBitsPerSecond))/\(rate(upBitsPerSecond)),\(Self.number(milliseconds))ms" + (connectionLoss > 0 ? ",loss=\(Self.number(connectionLoss * 100))%" : "")
    }

    /// The seconds `bytes` take to cross the link downwards, or upwards, at its rate.
    public func seconds(down bytes: Int64) -> Double { Double(bytes) * 8 / downBitsPerSecond }
    public func seconds(up bytes: Int64) -> Double { Double(bytes) * 8 / upBitsPerSecond }

    private static func rate(_ text: String) -> Double? {
        for (unit, factor) in [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)] where text.hasSuffix(unit) {
            guard let value = Double(text.dropLast(unit.count)), value > 0 else { return nil }
            return value * factor
        }
        return nil
    }

    private static func duration(_ text: String) -> Duration? {
        if text.hasSuffix("ms"), let value = Double(text.dropLast(2)), value >= 0 { return .microseconds(Int64(value * 1000)) }
        if text.hasSuffix("s"), let value = Double(text.dropLast()), value >= 0 { return .microseconds(Int64(value * 1_000_000)) }
        return nil
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }
}

/// A link written wrongly, with what is wrong.
public struct LinkProfileError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
