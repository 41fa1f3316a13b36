/// Reading a batch straight from its parsed JSON: the same values and the same `DecodingError`s as the `Decodable`
/// conformances, without the `Decoder` machinery (a server reads up to a thousand operations per request).
extension BatchRequest {
    /// Reads a batch from the parsed body of `POST /v1/projects/{project}/batch`.
    ///
    /// ```swift
    /// let batch = try BatchRequest(json: JSONValue(parsing: body))
    /// ```
    public init(json: JSONValue) throws {
        let members = try Self.object(json, at: [])
        atomic = try Self.member(members, "atomic", at: []) { value, path in
            guard case .bool(let bool) = value else { throw mismatch(expected: "a boolean", value, path) }
            return bool
        } ?? false
        guard let list = members["operations"] else {
            throw DecodingError.keyNotFound(AnyKey(stringValue: "operations"), .init(codingPath: [], debugDescription: "missing \"operations\""))
        }
        let listPath: [any CodingKey] = [AnyKey(stringValue: "operations")]
        guard case .array(let elements) = list else { throw mismatch(expected: "an array", list, listPath) }
        var operations: [SyncOperation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            operations.append(try SyncOperation(json: element, at: listPath + [AnyKey(intValue: index)]))
        }
        self.operations = operations
    }

    static func object(_ value: JSONValue, at path: [any CodingKey]) throws -> [String: JSONValue] {
        guard case .object(let members) = value else { throw mismatch(expected: "an object", value, path) }
        return members
    }

    /// A member that may be absent or null, read by `read` with its path.
    static func member<T>(
        _ members: [String: JSONValue], _ key: String, at path: [any CodingKey], _ read: (JSONValue, [any CodingKey]) throws -> T
    ) throws -> T? {
        guard let value = members[key], !value.isNull else { return nil }
        return try read(value, path + [AnyKey(stringValue: key)])
    }

    static func string(_ members: [String: JSONValue], _ key: String, at path: [any CodingKey]) throws -> String {
        guard let value = members[key] else {
            throw DecodingError.keyNotFound(AnyKey(stringValue: key), .init(codingPath: path, debugDescription: "missing \"\(key)\""))
        }
        guard case .string(let string) = value else { throw mismatch(expected: "a string", value, path + [AnyKey(stringValue: key)]) }
        return string
    }
}

extension SyncOperation {
    init(json: JSONValue, at path: [any CodingKey]) throws {
        let members = try BatchRequest.object(json, at: path)
        opId = try BatchRequest.string(members, "opId", at: path)
        collection = try BatchRequest.string(members, "collection", at: path)
        id = try BatchRequest.string(members, "id", at: path)
        let kind = try BatchRequest.string(members, "op", at: path)
        guard let op = OperationKind(rawValue: kind) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: path + [AnyKey(stringValue: "op")],
                debugDescription: "Cannot initialize OperationKind from invalid String value \(kind)"))
        }
        self.op = op
        baseVersion = try BatchRequest.member(members, "baseVersion", at: path) { value, path in
            guard let int = value.integerValue else { throw mismatch(expected: "an integer", value, path) }
            return int
        }
        data = try BatchRequest.member(members, "data", at: path) { value, path in try BatchRequest.object(value, at: path) }
    }
}
