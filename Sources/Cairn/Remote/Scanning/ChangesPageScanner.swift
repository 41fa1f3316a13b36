import CairnProtocol
import Foundation

/// One change of a pulled page, as the local store needs it: envelope values, the data's raw JSON text, and the
/// declared fields already typed for their columns.
struct ScannedChange: Sendable {
    var id: String
    var version: Int64
    var removed: Bool
    var updatedAt: String?
    var updatedBy: String?
    /// The data object's JSON text, as received.
    var dataText: String?
    /// Column values in the collection's field order (`nil` for absent or null).
    var fields: [JSONValue?]
    /// True for a `gone` marker: the record changed and left the pull's `where` filter (it is not deleted; `removed`
    /// is true too).
    var gone: Bool = false
}

/// A changes page (PROTOCOL.md's pull answer) read in one pass over its bytes, without building a value tree for record data: only the
/// declared fields are parsed, everything else is skipped (but still checked to be valid JSON).
struct ScannedPage: Sendable {
    var changes: [ScannedChange] = []
    var cursor: String?
    var hasMore: Bool?
    /// How many records the snapshot holds, on a snapshot's first page.
    var total: Int?

    /// Scans `bytes` for a collection with these fields; throws ``JSONParseError`` for malformed text or shapes.
    /// Json-typed fields come back as `.string` holding their JSON text.
    init(bytes: UnsafeBufferPointer<UInt8>, fields: [FieldSchema]) throws {
        var scanner = JSONParser(bytes: bytes)
        let fieldIndex = Dictionary(uniqueKeysWithValues: fields.enumerated().map { ($1.name, $0) })
        let jsonFields = Set(fields.filter { $0.type == .json }.map(\.name))
        scanner.skipWhitespace()
        try scanner.members { scanner, key in
            switch key {
            case "changes":
                try scanner.elements { scanner in
                    changes.append(try Self.change(&scanner, fieldIndex: fieldIndex, jsonFields: jsonFields, fieldCount: fields.count))
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
        _ scanner: inout JSONParser, fieldIndex: [String: Int], jsonFields: Set<String>, fieldCount: Int
    ) throws -> ScannedChange {
        var id: String?
        var version: Int64?
        var change = ScannedChange(id: "", version: 0, removed: false, fields: Array(repeating: nil, count: fieldCount))
        var sawData = false
        try scanner.members { scanner, key in
            switch Change.CodingKeys(rawValue: key) {
            case .id:
                guard case .string(let text) = try scanner.parseValue() else { throw scanner.fail("id must be a string") }
                id = text
            case .version:
                guard case .integer(let number) = try scanner.parseValue() else { throw scanner.fail("version must be an integer") }
                version = number
            case .deleted:
                if case .bool(true) = try scanner.parseValue() { change.removed = true }
            case .gone:
                if case .bool(true) = try scanner.parseValue() {
                    change.removed = true
                    change.gone = true
                }
            case .updatedAt:
                change.updatedAt = try scanner.parseValue().stringValue
            case .updatedBy:
                change.updatedBy = try scanner.parseValue().stringValue
            case .data:
                let start = scanner.index
                guard scanner.peek == UInt8(ascii: "{") else { throw scanner.fail("data must be an object") }
                try scanner.members { scanner, field in
                    guard let position = fieldIndex[field] else { return try scanner.skipValue() }
                    if jsonFields.contains(field) {
                        let valueStart = scanner.index
                        try scanner.skipValue()
                        let text = scanner.text(valueStart..<scanner.index)
                        change.fields[position] = text == "null" ? nil : .string(text)
                    } else {
                        let value = try scanner.parseValue()
                        change.fields[position] = value.isNull ? JSONValue?.none : value  // not `nil`, which would read as `.null`
                    }
                }
                change.dataText = scanner.text(start..<scanner.index)
                sawData = true
            case nil:
                try scanner.skipValue()
            }
        }
        guard let id, let version else { throw scanner.fail("a change lacks its id or version") }
        guard change.removed || sawData else { throw scanner.fail("change \(id) lacks its data") }
        change.id = id
        change.version = version
        return change
    }
}
