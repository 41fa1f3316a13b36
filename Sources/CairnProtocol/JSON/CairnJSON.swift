import Foundation

/// The JSON coders Cairn uses on the wire: RFC 3339 dates with milliseconds, sorted keys.
public enum CairnJSON {
    /// An encoder for wire types.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(from: date))
        }
        return encoder
    }

    /// Encodes a wire value to JSON bytes.
    public static func encode<T: Encodable>(_ value: T) throws -> Data { try encoder().encode(value) }

    /// Decodes a wire value from JSON bytes (strictly parsed; dates are RFC 3339).
    public static func decode<T: Decodable>(_ type: T.Type, from data: some Collection<UInt8>) throws -> T {
        try JSONValueDecoder().decode(type, from: data)
    }
}
