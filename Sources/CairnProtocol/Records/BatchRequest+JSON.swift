/// Reading a batch straight from its parsed JSON: the same values and the same `DecodingError`s as the `Decodable`
/// conformances, without the `Decoder` machinery (a server reads up to a thousand operations per request); and
/// writing one around operations already text.
extension BatchRequest {
    /// Reads a batch from the parsed body of `POST /v1/projects/{project}/batch`.
    ///
    /// ```swift
    /// let batch = try BatchRequest(json: JSONValue(parsing: body))
    /// ```
    public init(json: JSONValue) throws {
        let members = try Self.object(json, at: [])
        var read = BatchRequest(operations: [])
        for key in CodingKeys.allCases {
            switch key {
            case .atomic:
                read.atomic = try Self.member(members, key, at: []) { value, path in
                    guard case .bool(let bool) = value else { throw mismatch(expected: "a boolean", value, path) }
                    return bool
                } ?? false
            case .operations:
                guard let list = members[key.stringValue] else {
                    throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "missing \"\(key.stringValue)\""))
                }
                let listPath: [any CodingKey] = [key]
                guard case .array(let elements) = list else { throw mismatch(expected: "an array", list, listPath) }
                read.operations.reserveCapacity(elements.count)
                for (index, element) in elements.enumerated() {
                    read.operations.append(try SyncOperation(json: element, at: listPath + [AnyKey(intValue: index)]))
                }
            }
        }
        self = read
    }

    /// The members in the order the writer puts them.
    package static let members = JSONMembers<CodingKeys>()

    /// Appends a batch object whose `count` operations `operation` appends (by index); `atomic` is written only
    /// when true, as its absence means false.
    ///
    /// ```swift
    /// BatchRequest.write(atomic: false, count: ops.count, into: &bytes) { index, bytes in bytes += Array(ops[index].utf8) }
    /// ```
    package static func write(atomic: Bool, count: Int, into bytes: inout [UInt8], operation: (Int, inout [UInt8]) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        members.withNames { names in
            for (index, key) in members.keys.enumerated() {
                switch key {
                case .atomic:
                    guard atomic else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendBool(true)
                case .operations:
                    bytes.appendMember(names[index], first: &first)
                    bytes.append(UInt8(ascii: "["))
                    for position in 0..<count {
                        if position > 0 { bytes.append(UInt8(ascii: ",")) }
                        operation(position, &bytes)
                    }
                    bytes.append(UInt8(ascii: "]"))
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// This batch's wire JSON, as an upload writes it.
    package var jsonText: String {
        var bytes: [UInt8] = []
        Self.write(atomic: atomic, count: operations.count, into: &bytes) { index, bytes in
            bytes.append(contentsOf: operations[index].jsonText.utf8)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func object(_ value: JSONValue, at path: [any CodingKey]) throws -> [String: JSONValue] {
        guard case .object(let members) = value else { throw mismatch(expected: "an object", value, path) }
        return members
    }

    /// A member that may be absent or null, read by `read` with its path.
    static func member<T>(
        _ members: [String: JSONValue], _ key: some CodingKey, at path: [any CodingKey], _ read: (JSONValue, [any CodingKey]) throws -> T
    ) throws -> T? {
        guard let value = members[key.stringValue], !value.isNull else { return nil }
        return try read(value, path + [key])
    }

    static func string(_ members: [String: JSONValue], _ key: some CodingKey, at path: [any CodingKey]) throws -> String {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: path, debugDescription: "missing \"\(key.stringValue)\""))
        }
        guard case .string(let string) = value else { throw mismatch(expected: "a string", value, path + [key]) }
        return string
    }
}
