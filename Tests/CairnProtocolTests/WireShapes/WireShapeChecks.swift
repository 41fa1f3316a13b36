import CairnProtocol
import Foundation

/// Shared steps of the wire shapes' property tests.
enum WireShapeChecks {
    /// How many random values each property test tries.
    static let samples = 400

    /// `value` through the Codable writer and the Codable reader (CairnJSON, as the wire uses them).
    static func codable<T: Codable>(_ value: T) throws -> T {
        try CairnJSON.decode(T.self, from: CairnJSON.encode(value))
    }

    /// `text` read by the Codable reader.
    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try CairnJSON.decode(type, from: Array(text.utf8))
    }

    /// The Codable writer's JSON of `value`, parsed.
    static func codableTree<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONValue(parsing: CairnJSON.encode(value))
    }

    /// A record object's tree as its wire writer makes it: a tombstone carries no `data` (the Codable writer writes `{}`).
    static func recordTree(_ tree: JSONValue) -> JSONValue {
        guard case .object(var members) = tree, members["deleted"] == .bool(true) else { return tree }
        members["data"] = nil
        return .object(members)
    }
}
