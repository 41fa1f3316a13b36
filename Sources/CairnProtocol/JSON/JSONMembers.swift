/// A wire shape's members as its writers put them: the coding keys in writing order, each with its `"name":` in
/// UTF-8, made once from the keys (plain ASCII names that need no escape).
///
/// ```swift
/// static let members = JSONMembers<CodingKeys>()
/// members.withNames { names in
///     for (index, key) in members.keys.enumerated() {
///         switch key { case .id: bytes.appendMember(names[index], first: &first) ... }
///     }
/// }
/// ```
package struct JSONMembers<Key: CodingKey & CaseIterable & Sendable>: Sendable {
    /// The members in writing order.
    package let keys: [Key]
    /// Every name, one after the other.
    private let text: [UInt8]
    /// Where each key's name lies in `text`.
    private let ranges: [Range<Int>]

    /// The members `keys`, in that order; all of the shape's keys by default.
    package init(_ keys: [Key] = Array(Key.allCases)) {
        var text: [UInt8] = []
        var ranges: [Range<Int>] = []
        for key in keys {
            let start = text.count
            text += Array("\"\(key.stringValue)\":".utf8)
            ranges.append(start..<text.count)
        }
        self.keys = keys
        self.text = text
        self.ranges = ranges
    }

    /// Runs `body` with the names at hand: a feed page writes thousands of objects, and names read this way cost no
    /// reference counting per member.
    package func withNames<Result>(_ body: (Names) throws -> Result) rethrows -> Result {
        try text.withUnsafeBufferPointer { text in try body(Names(text: text, ranges: ranges)) }
    }

    /// The names of ``keys``, by position.
    package struct Names {
        fileprivate let text: UnsafeBufferPointer<UInt8>
        fileprivate let ranges: [Range<Int>]

        /// The `"name":` of the key at `index` of ``JSONMembers/keys``.
        package subscript(index: Int) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: text[ranges[index]]) }
    }
}

extension [UInt8] {
    /// Starts a member of a JSON object being written: a comma unless `first`, then its `name` from ``JSONMembers``.
    @inline(__always)
    package mutating func appendMember(_ name: UnsafeBufferPointer<UInt8>, first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        append(contentsOf: name)
    }

    /// Appends `value` in decimal, without making a string (the feed writes several per change).
    package mutating func appendDecimal(_ value: Int64) {
        var magnitude = value.magnitude
        var count = value < 0 ? 2 : 1
        var rest = magnitude / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        let start = self.count
        append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
        withUnsafeMutableBufferPointer { bytes in
            var index = start + count - 1
            repeat {
                bytes[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                index -= 1
            } while magnitude > 0
            if value < 0 { bytes[start] = UInt8(ascii: "-") }
        }
    }

    /// Appends `true` or `false`.
    package mutating func appendBool(_ value: Bool) {
        append(contentsOf: (value ? "true" : "false").utf8)
    }
}
