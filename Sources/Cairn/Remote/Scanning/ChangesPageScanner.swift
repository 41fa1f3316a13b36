import CairnProtocol
import Foundation

/// A pulled page's bytes, kept while its changes are written: their data and most field values are ranges of it, so
/// a page is read without copying its records' texts.
final class PageBytes: Sendable {
    /// The page's UTF-8 JSON.
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The text of `range`.
    func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
}

/// One declared field of a pulled change, typed for its column.
enum ScannedValue: Sendable, Hashable {
    /// Absent or `null`.
    case absent
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    /// Text that stands as it is in the page's bytes: a string without escapes (its content) or a json field's JSON.
    case bytes(Range<Int>)
    /// A string that needed unescaping.
    case text(String)
}

/// One change of a pulled page, as the local store needs it: envelope values, and ranges of the page's bytes for the
/// data's JSON text and the declared fields (typed for their columns).
struct ScannedChange: Sendable {
    var id: String
    var version: Int64
    var removed: Bool
    var updatedAt: String?
    var updatedBy: String?
    /// The page the ranges point into (`nil` for a removal made without a page).
    var page: PageBytes?
    /// The data object's JSON text, as received: a range of the page.
    var dataRange: Range<Int>?
    /// Column values in the collection's field order.
    var values: [ScannedValue] = []
    /// True for a `gone` marker: the record changed and left the pull's `where` filter (it is not deleted; `removed`
    /// is true too).
    var gone: Bool = false

    /// The data object's JSON text.
    var dataText: String? { dataRange.flatMap { range in page?.text(range) } }
}

/// A changes page (PROTOCOL.md's pull answer) read in one pass over its bytes, without building a value tree for record data: only the
/// declared fields are parsed, everything else is skipped (but still checked to be valid JSON).
struct ScannedPage: Sendable {
    var changes: [ScannedChange] = []
    var cursor: String?
    var hasMore: Bool?
    /// How many records the snapshot holds, on a snapshot's first page.
    var total: Int?

    /// Scans `page` for a collection with these fields; throws ``JSONParseError`` for malformed text or shapes.
    /// Json-typed fields come back as their JSON text.
    init(page: PageBytes, fields: [FieldSchema]) throws {
        self = try page.bytes.withUnsafeBufferPointer { bytes in try ScannedPage(bytes: bytes, page: page, fields: fields) }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, page: PageBytes, fields: [FieldSchema]) throws {
        var scanner = JSONParser(bytes: bytes)
        let fieldIndex = Dictionary(uniqueKeysWithValues: fields.enumerated().map { ($1.name, $0) })
        let jsonFields = Set(fields.filter { $0.type == .json }.map(\.name))
        scanner.skipWhitespace()
        try scanner.members { scanner, key in
            switch key {
            case "changes":
                // A member named twice reads as its last, as the strict parser reads it.
                changes = []
                try scanner.elements { scanner in
                    changes.append(try Self.change(&scanner, page: page, fieldIndex: fieldIndex, jsonFields: jsonFields, fieldCount: fields.count))
                }
            case "cursor":
                guard case .string(let text) = try scanner.parseValue() else { throw scanner.fail("cursor must be a string") }
                cursor = text
            case "hasMore":
                guard case .bool(let flag) = try scanner.parseValue() else { throw scanner.fail("hasMore must be a boolean") }
                hasMore = flag
            case "total":
                guard case .integer(let number) = try scanner.parseValue(), number >= 0 else { throw scanner.fail("total must be a count") }
                total = Int(number)
            default:
                try scanner.skipValue()
            }
        }
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw scanner.fail("unexpected text after the page") }
    }

    private static func change(
        _ scanner: inout JSONParser, page: PageBytes, fieldIndex: [String: Int], jsonFields: Set<String>, fieldCount: Int
    ) throws -> ScannedChange {
        var id: String?
        var version: Int64?
        var change = ScannedChange(id: "", version: 0, removed: false, page: page, values: Array(repeating: .absent, count: fieldCount))
        var sawData = false
        var deleted = false, gone = false
        try scanner.members { scanner, key in
            switch Change.CodingKeys(rawValue: key) {
            case .id:
                guard case .string(let text) = try scanner.parseValue() else { throw scanner.fail("id must be a string") }
                id = text
            case .version:
                guard case .integer(let number) = try scanner.parseValue() else { throw scanner.fail("version must be an integer") }
                version = number
            case .deleted:
                deleted = try scanner.parseValue() == .bool(true)
            case .gone:
                gone = try scanner.parseValue() == .bool(true)
            case .updatedAt:
                change.updatedAt = try scanner.parseValue().stringValue
            case .updatedBy:
                change.updatedBy = try scanner.parseValue().stringValue
            case .data:
                let start = scanner.index
                guard scanner.peek == UInt8(ascii: "{") else { throw scanner.fail("data must be an object") }
                change.values = Array(repeating: .absent, count: fieldCount)
                try scanner.members { scanner, field in
                    guard let position = fieldIndex[field] else { return try scanner.skipValue() }
                    if jsonFields.contains(field) {
                        let valueStart = scanner.index
                        try scanner.skipValue()
                        let range = valueStart..<scanner.index
                        let isNull = range.count == 4 && scanner.bytes[valueStart] == UInt8(ascii: "n")
                        change.values[position] = isNull ? .absent : .bytes(range)
                    } else if scanner.peek == UInt8(ascii: "\""), let range = try scanner.plainString() {
                        change.values[position] = .bytes(range)
                    } else {
                        change.values[position] = ScannedValue(try scanner.parseValue())
                    }
                }
                let range = start..<scanner.index
                // Text goes to the store as the page holds it: it must be UTF-8 (JSON's structure is ASCII).
                var highBits: UInt8 = 0
                for index in range { highBits |= scanner.bytes[index] }
                if highBits >= 0x80, String(validating: UnsafeBufferPointer(rebasing: scanner.bytes[range]), as: UTF8.self) == nil {
                    throw scanner.fail("invalid UTF-8 in the data of a change")
                }
                change.dataRange = range
                sawData = true
            case nil:
                try scanner.skipValue()
            }
        }
        change.removed = deleted || gone
        change.gone = gone
        guard let id, let version else { throw scanner.fail("a change lacks its id or version") }
        guard change.removed || sawData else { throw scanner.fail("change \(id) lacks its data") }
        change.id = id
        change.version = version
        return change
    }
}

extension ScannedValue {
    /// A parsed value of a declared field that is not json-typed (other shapes than the column's type are kept as
    /// they are; the column takes what SQLite makes of them, as before).
    init(_ value: JSONValue) {
        switch value {
        case .integer(let int): self = .integer(int)
        case .number(let double): self = .number(double)
        case .bool(let bool): self = .bool(bool)
        case .string(let text): self = .text(text)
        case .null, .array, .object: self = .absent
        }
    }
}
