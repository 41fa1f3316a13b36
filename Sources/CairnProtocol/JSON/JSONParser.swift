import Foundation

/// Malformed JSON text: what was wrong and where.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    /// What the parser expected or found.
    public var reason: String
    /// Byte offset of the problem in the input.
    public var offset: Int

    /// `invalid JSON at byte 12: unexpected character`; it never quotes the input, which may be user data.
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes, with a nesting limit so hostile input cannot exhaust the stack.
package struct JSONParser {
    package let bytes: UnsafeBufferPointer<UInt8>
    package var index = 0
    var depth = 0
    static let maximumDepth = 256

    package init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    package func fail(_ reason: String) -> JSONParseError { JSONParseError(reason: reason, offset: index) }

    package mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    package mutating func parseValue() throws -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of input") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw fail("invalid literal")
        }
        index += count
    }

    mutating func enter() throws {
        depth += 1
        guard depth <= JSONParser.maximumDepth else { throw fail("nesting deeper than \(JSONParser.maximumDepth)") }
    }

    mutating func parseObject() throws -> JSONValue {
        var members: [String: JSONValue] = [:]
        try self.members { parser, key in members[key] = try parser.parseValue() }
        return .object(members)
    }

    mutating func parseArray() throws -> JSONValue {
        var elements: [JSONValue] = []
        try self.elements { parser in elements.append(try parser.parseValue()) }
        return .array(elements)
    }

    mutating func parseString() throws -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        var bits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                // ASCII needs no validation (and `String(validating:)` is much slower than decoding).
                if bits < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8") }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            bits |= byte
            index += 1
        }
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else { throw fail("invalid UTF-8") }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw fail("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw fail("unpaired surrogate") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw fail("unpaired surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
                    buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
                default: throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in string") }
                buffer.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("unexpected end of input") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let int = Int64(text) { return .integer(int) }
        guard let double = Double(text), double.isFinite else { throw fail("number out of range") }
        return .number(double)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

/// Walking JSON without building it all: the page and result scanners read members one at a time.
extension JSONParser {
    package var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    package func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Reads an object, calling `body` with each member name; `body` must consume the member's value.
    package mutating func members(_ body: (inout JSONParser, String) throws -> Void) throws {
        skipWhitespace()
        guard peek == UInt8(ascii: "{") else { throw fail("expected an object") }
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            try body(&self, key)
            skipWhitespace()
            guard let next = peek else { throw fail("unexpected end of input") }
            index += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "}") { return }
            throw fail("expected ',' or '}'")
        }
    }

    /// Reads an array, calling `body` for each element; `body` must consume the element.
    package mutating func elements(_ body: (inout JSONParser) throws -> Void) throws {
        skipWhitespace()
        guard peek == UInt8(ascii: "[") else { throw fail("expected an array") }
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            try body(&self)
            skipWhitespace()
            guard let next = peek else { throw fail("unexpected end of input") }
            index += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "]") { return }
            throw fail("expected ',' or ']'")
        }
    }

    /// Checks and passes over one value without building it.
    package mutating func skipValue() throws {
        skipWhitespace()
        guard let byte = peek else { throw fail("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): try members { scanner, _ in try scanner.skipValue() }
        case UInt8(ascii: "["): try elements { scanner in try scanner.skipValue() }
        case UInt8(ascii: "\""): try skipString()
        default: _ = try parseValue()
        }
    }

    /// The range of a string's content (between its quotes) when it is plain ASCII without escapes, which is then its
    /// UTF-8 text as it stands: the parser moves past it. Otherwise `nil`, and the parser stays on the string for
    /// ``parseValue()`` to read it.
    package mutating func plainString() throws -> Range<Int>? {
        let quote = index
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<(index - 1)
            }
            if byte == UInt8(ascii: "\\") || byte >= 0x80 { break }
            if byte < 0x20 { throw fail("control character in string") }
            index += 1
        }
        index = quote
        return nil
    }

    /// Passes over the digits of a `\u` escape (and the low half that must follow a high surrogate), refusing
    /// what ``parseString()`` refuses: a surrogate without its other half.
    mutating func skipUnicodeEscape() throws {
        let scalar = try parseHex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw fail("unpaired surrogate") }
            index += 2
            guard (0xDC00..<0xE000).contains(try parseHex4()) else { throw fail("unpaired surrogate") }
        } else if (0xDC00..<0xE000).contains(scalar) {
            throw fail("unpaired surrogate")
        }
    }

    /// Passes over a string, checking its escapes.
    mutating func skipString() throws {
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return
            }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard let escape = peek else { break }
                if escape == UInt8(ascii: "u") {
                    index += 1
                    try skipUnicodeEscape()
                    continue
                }
                guard [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                       UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t")].contains(escape)
                else { throw fail("invalid escape") }
            } else if byte < 0x20 {
                throw fail("control character in string")
            }
            index += 1
        }
        throw fail("unterminated string")
    }
}
