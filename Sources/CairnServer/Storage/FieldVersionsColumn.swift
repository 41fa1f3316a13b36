import CairnProtocol

/// The `field_versions` column: a JSON object of field name to version, with sorted keys (as
/// `JSONValue.jsonText()` writes an object), made without building a `JSONValue` per record.
enum FieldVersionsColumn {
    /// The column text of `versions`.
    static func encode(_ versions: [String: Int64]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(versions.count * 24)
        for (index, name) in versions.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(name, into: &bytes)
            bytes.append(contentsOf: ":\(versions[name]!)".utf8)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The versions in column text (members that are not integers are skipped).
    static func decode(_ text: String) throws -> [String: Int64] {
        (try JSONValue(parsing: Array(text.utf8)).objectValue ?? [:]).compactMapValues(\.integerValue)
    }
}
