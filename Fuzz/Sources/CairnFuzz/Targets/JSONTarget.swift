import CairnProtocol

/// `json`: the strict parser. What parses re-encodes (sorted and unsorted) and parses back equal, and the canonical
/// text is stable; the `Codable` decoder reads the same value; the scanners' `skipValue` accepts exactly what the
/// parser accepts (it may let invalid UTF-8 through: it does not build strings).
enum JSONTarget {
    static func run(_ bytes: [UInt8]) {
        let parsed = try? JSONValue(parsing: bytes)
        let skipped = bytes.withUnsafeBufferPointer { buffer -> Bool in
            var parser = JSONParser(bytes: buffer)
            do {
                try parser.skipValue()
                parser.skipWhitespace()
                return parser.index == buffer.count
            } catch {
                return false
            }
        }
        guard let value = parsed else {
            if skipped {
                require(String(validating: bytes, as: UTF8.self) == nil, "skipValue accepts \(show(bytes)), which the parser refuses")
            }
            return
        }
        require(skipped, "skipValue refuses \(show(bytes)), which the parser accepts")
        let text = value.jsonBytes()
        guard let again = try? JSONValue(parsing: text) else { return require(false, "re-encoded \(show(text)) does not parse") }
        require(again == value, "re-encoded \(show(text)) parses to another value")
        require(again.jsonBytes() == text, "canonical text of \(show(text)) is not stable")
        let unsorted = value.jsonBytes(sortedKeys: false)
        require((try? JSONValue(parsing: unsorted)) == value, "unsorted text \(show(unsorted)) parses to another value")
        var string = ""
        value.write(to: &string)
        require(Array(string.utf8) == text, "write(to: String) differs from jsonBytes")
        require((try? CairnJSON.decode(JSONValue.self, from: bytes)) == value, "the Codable decoder reads \(show(bytes)) differently")
    }
}
