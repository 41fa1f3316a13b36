import Foundation

extension JSONValue {
    /// Parses JSON text (UTF-8) into a value.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: Data(#"{"a": [1, 2.5, "x"]}"#.utf8))
    /// ```
    /// - Throws: ``JSONParseError`` with the byte offset of the first problem.
    public init(parsing data: some Collection<UInt8>) throws {
        self = try data.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(bytes: buffer)
            return try parser.parseDocument()
        } ?? {
            let bytes = Array(data)
            return try bytes.withUnsafeBufferPointer { buffer in
                var parser = JSONParser(bytes: buffer)
                return try parser.parseDocument()
            }
        }()
    }

    /// Parses JSON text given as a string.
    public init(parsing text: String) throws {
        try self.init(parsing: Array(text.utf8))
    }

    /// Compact JSON text for this value. With `sortedKeys` (the default) the text is canonical:
    /// the same value always gives the same bytes.
    public func jsonText(sortedKeys: Bool = true) -> String {
        String(decoding: jsonBytes(sortedKeys: sortedKeys), as: UTF8.self)
    }

    /// The compact JSON text as UTF-8 bytes.
    public func jsonData(sortedKeys: Bool = true) -> Data {
        Data(jsonBytes(sortedKeys: sortedKeys))
    }

    /// The compact JSON text as an array of UTF-8 bytes.
    public func jsonBytes(sortedKeys: Bool = true) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(into: &output, sortedKeys: sortedKeys)
        return output
    }

    /// Appends this value's compact JSON text to `output`.
    public func write(to output: inout String, sortedKeys: Bool = true) {
        output += jsonText(sortedKeys: sortedKeys)
    }

    /// Appends this value's compact JSON text, as UTF-8, to `output`.
    public func write(into output: inout [UInt8], sortedKeys: Bool = true) {
        switch self {
        case .null: output.append(contentsOf: JSONValue.nullBytes)
        case .bool(let bool): output.append(contentsOf: bool ? JSONValue.trueBytes : JSONValue.falseBytes)
        case .integer(let int): output.append(contentsOf: String(int).utf8)
        case .number(let double): output.append(contentsOf: JSONValue.format(double).utf8)
        case .string(let string): JSONValue.writeString(string, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(into: &output, sortedKeys: sortedKeys)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            var first = true
            func member(_ key: String, _ value: JSONValue) {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                value.write(into: &output, sortedKeys: sortedKeys)
            }
            if sortedKeys {
                for key in members.keys.sorted() { member(key, members[key]!) }
            } else {
                for (key, value) in members { member(key, value) }
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let nullBytes = Array("null".utf8), trueBytes = Array("true".utf8), falseBytes = Array("false".utf8)

    static func format(_ double: Double) -> String {
        guard double.isFinite else { return "null" }
        if double.rounded() == double && abs(double) < 1e15 {
            return String(Int64(double)) + ".0"
        }
        return "\(double)"
    }

    /// Appends `string` as a quoted, escaped JSON string.
    public static func writeString(_ string: String, to output: inout String) {
        var bytes: [UInt8] = []
        writeString(string, into: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string` as a quoted, escaped JSON string, in UTF-8.
    public static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                switch byte {
                case 0x22: output.append(contentsOf: [0x5C, 0x22])
                case 0x5C: output.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    output.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                               Hex.digits[Int(byte >> 4)], Hex.digits[Int(byte & 0x0F)]])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
