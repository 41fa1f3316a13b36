import Foundation

/// Makes `opId`s: UUID version 7 text (RFC 9562), ordered by creation time.
///
/// Ids made later sort after earlier ones (also within one millisecond, through a counter), so the indexes that
/// find operations by `opId` mostly grow at their end instead of being rewritten at random places: the local
/// queue's exactly, the server's nearly (a device that was offline uploads older ids late). The remaining 62 bits
/// are random, so ids from different devices do not collide.
///
/// ```swift
/// let op = SyncOperation(opId: OperationID.make(), collection: "notes", id: "n-1", op: .create, data: ["title": "Hi"])
/// ```
public enum OperationID {
    private static let generator = Generator()

    /// A new time-ordered id, such as `019aa0f4-5b2c-7000-8e4f-1c2d3e4f5a6b`.
    public static func make(now: Date = Date()) -> String {
        generator.next(milliseconds: UInt64(max(0, now.timeIntervalSince1970 * 1000)))
    }

    /// The creation time (to the millisecond) of a UUID version 7 id such as ``make(now:)`` makes; `nil` for ids
    /// that are not UUID version 7 text.
    public static func date(of id: String) -> Date? {
        let hex = id.utf8.filter { $0 != UInt8(ascii: "-") }
        guard id.utf8.count == 36, hex.count == 32, hex[12] == UInt8(ascii: "7"),
              let milliseconds = UInt64(String(decoding: hex[0..<12], as: UTF8.self), radix: 16)
        else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Keeps the last timestamp and counter so ids stay ordered when the clock repeats or steps back.
    private final class Generator: @unchecked Sendable {
        private let lock = NSLock()
        private var lastMilliseconds: UInt64 = 0
        private var counter: UInt64 = 0

        func next(milliseconds now: UInt64) -> String {
            let (milliseconds, sequence): (UInt64, UInt64) = lock.withLock {
                if now > lastMilliseconds {
                    lastMilliseconds = now
                    counter = UInt64.random(in: 0..<0x400)  // leaves room for 3,000+ ids in the same millisecond
                } else if counter < 0xFFF {
                    counter += 1
                } else {
                    lastMilliseconds += 1
                    counter = 0
                }
                return (lastMilliseconds, counter)
            }
            let high = (milliseconds & 0xFFFF_FFFF_FFFF) << 16 | 0x7000 | sequence
            let low = UInt64.random(in: 0...UInt64.max) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
            var text: [UInt8] = []
            text.reserveCapacity(36)
            for position in 0..<32 {
                if position == 8 || position == 12 || position == 16 || position == 20 { text.append(UInt8(ascii: "-")) }
                let word = position < 16 ? high : low
                text.append(Hex.digits[Int(word >> (60 - 4 * UInt64(position % 16)) & 0xF)])
            }
            return String(decoding: text, as: UTF8.self)
        }
    }
}
