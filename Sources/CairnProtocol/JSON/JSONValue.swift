import Foundation

/// A JSON value that keeps what it was given: integers stay integers, numbers stay numbers,
/// and objects keep every key, nested to any depth.
///
/// ```swift
/// let value: JSONValue = ["title": "Buy milk", "count": 2, "tags": ["home"]]
/// value["count"]  // .integer(2)
/// ```
public enum JSONValue: Sendable, Hashable {
    /// JSON `null`; for record fields the same as a missing field.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integral number that fits `Int64`, such as a record `version`.
    case integer(Int64)
    /// Any other finite number, such as `1.5`.
    case number(Double)
    /// A string; datetimes are RFC 3339 strings.
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object; keys are unordered and unique.
    case object([String: JSONValue])
}

extension JSONValue {
    /// The member named `key` when this is an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The object's members, or `nil` when this is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The array's elements, or `nil` when this is not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The string, or `nil` when this is not a string.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The boolean, or `nil` when this is not a boolean.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The integer, or `nil` when this is not an integer (a number with no fraction counts).
    public var integerValue: Int64? {
        switch self {
        case .integer(let int): return int
        case .number(let double) where double.rounded() == double && abs(double) < 9.2e18: return Int64(double)
        default: return nil
        }
    }

    /// The value as a `Double` when it is an integer or a number.
    public var numberValue: Double? {
        switch self {
        case .integer(let int): return Double(int)
        case .number(let double): return double
        default: return nil
        }
    }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the value's kind, for error messages: `"string"`, `"integer"`, ...
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value, trying `Int64` before `Double` so integers stay ``integer(_:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? container.decode(Int64.self) {
            self = .integer(int)
        } else if let double = try? container.decode(Double.self) {
            self = .number(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else if let object = try? container.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Encodes the value as the JSON it stands for. `.integer` and `.number` keep their kind through Cairn's own
    /// writer (``jsonText(sortedKeys:)``), but Foundation's `JSONEncoder` writes an integral number such as `2.0`
    /// as `2`, which reads back as `.integer(2)`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .integer(let int): try container.encode(int)
        case .number(let double): try container.encode(double)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// `true` and `false` are ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal is ``integer(_:)``: `let count: JSONValue = 2`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A float literal is ``number(_:)``, even `1.0`.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A string literal is ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal is ``array(_:)``: `let tags: JSONValue = ["home", "urgent"]`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal is ``object(_:)``; when a key repeats, the last value wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
