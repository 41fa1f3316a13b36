/// A wire shape's members as its writers put them: each coding key with its `"name":` in UTF-8, made once from the
/// keys (plain ASCII names that need no escape), in the order given.
///
/// ```swift
/// static let members = JSONMembers<CodingKeys>()
/// for (key, name) in members.all { switch key { case .id: bytes.appendMember(name, first: &first) ... } }
/// ```
package struct JSONMembers<Key: CodingKey & CaseIterable & Sendable>: Sendable {
    /// The members in writing order.
    package let all: [(key: Key, name: [UInt8])]

    /// The members `keys`, in that order; all of the shape's keys by default.
    package init(_ keys: [Key] = Array(Key.allCases)) {
        all = keys.map { ($0, Array("\"\($0.stringValue)\":".utf8)) }
    }
}

extension [UInt8] {
    /// Starts a member of a JSON object being written: a comma unless `first`, then its `name` from ``JSONMembers``.
    @inline(__always)
    package mutating func appendMember(_ name: [UInt8], first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        append(contentsOf: name)
    }

    /// Appends `value` in decimal.
    package mutating func appendDecimal(_ value: Int64) {
        append(contentsOf: String(value).utf8)
    }

    /// Appends `true` or `false`.
    package mutating func appendBool(_ value: Bool) {
        append(contentsOf: (value ? "true" : "false").utf8)
    }
}
