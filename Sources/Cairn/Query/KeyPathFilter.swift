import CairnProtocol
import Foundation

/// Filters written with the key paths of a `Codable` model, for typed queries:
///
/// ```swift
/// struct Note: Codable { var id: String?; var title: String; var done: Bool; var due: Date? }
///
/// let open = try client.all(Note.self, Query("notes").filter(\Note.done == false && \Note.due < deadline))
/// ```
///
/// A key path names the field of the same name, so this works for models whose stored properties are named as the
/// schema's fields (no renaming `CodingKeys`) and for one level of properties (`\Note.title`, not
/// `\Note.place.city`). Values are encoded as the record would be (`Date` as RFC 3339 text, enums by raw value). A
/// key path that names no schema field is a `validation_failed` error when the query runs.
extension Filter {
    /// A condition on the field that `keyPath` names.
    public static func field<Root, Value: Encodable>(_ keyPath: KeyPath<Root, Value>, _ op: FilterOperator, _ value: Value) -> Filter {
        .condition(field: fieldName(keyPath), op: op, value: encoded(value))
    }

    /// `exists` on the field that `keyPath` names: true matches a present, non-null value.
    public static func field<Root, Value>(_ keyPath: KeyPath<Root, Value>, exists: Bool) -> Filter {
        .condition(field: fieldName(keyPath), op: .exists, value: .bool(exists))
    }

    /// `in` on the field that `keyPath` names.
    public static func field<Root, Value: Encodable>(_ keyPath: KeyPath<Root, Value>, in values: [Value]) -> Filter {
        .condition(field: fieldName(keyPath), op: .in, value: .array(values.map { value in encoded(value) }))
    }

    /// The field a key path names: `\Note.title` is `title`.
    static func fieldName<Root, Value>(_ keyPath: KeyPath<Root, Value>) -> String {
        let text = String(describing: keyPath)
        let prefix = "\\\(Root.self)."
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }

    /// The JSON value of one field value, as the record encoder writes it.
    static func encoded<Value: Encodable>(_ value: Value) -> JSONValue {
        guard let data = try? CairnJSON.encode([value]), case .array(let values)? = try? JSONValue(parsing: data), let first = values.first
        else { return .null }
        return first
    }
}

/// `keyPath == value`: the field equals `value` (`nil` matches a null or missing field).
public func == <Root, Value: Encodable>(keyPath: KeyPath<Root, Value>, value: Value) -> Filter { .field(keyPath, .eq, value) }
/// `keyPath != value`: the field differs from `value`, or is null or missing.
public func != <Root, Value: Encodable>(keyPath: KeyPath<Root, Value>, value: Value) -> Filter { .field(keyPath, .ne, value) }
/// `keyPath < value` (never matches a null or missing field).
public func < <Root, Value: Encodable>(keyPath: KeyPath<Root, Value>, value: Value) -> Filter { .field(keyPath, .lt, value) }
/// `keyPath <= value` (never matches a null or missing field).
public func <= <Root, Value: Encodable>(keyPath: KeyPath<Root, Value>, value: Value) -> Filter { .field(keyPath, .lte, value) }
/// `keyPath > value` (never matches a null or missing field).
public func > <Root, Value: Encodable>(keyPath: KeyPath<Root, Value>, value: Value) -> Filter { .field(keyPath, .gt, value) }
/// `keyPath >= value` (never matches a null or missing field).
public func >= <Root, Value: Encodable>(keyPath: KeyPath<Root, Value>, value: Value) -> Filter { .field(keyPath, .gte, value) }

/// Both filters match.
public func && (left: Filter, right: Filter) -> Filter {
    if case .and(let filters) = left { return .and(filters + [right]) }
    return .and([left, right])
}

/// Either filter matches.
public func || (left: Filter, right: Filter) -> Filter {
    if case .or(let filters) = left { return .or(filters + [right]) }
    return .or([left, right])
}
