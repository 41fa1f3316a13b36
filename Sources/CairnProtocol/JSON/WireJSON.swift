/// Hand-built JSON of the wire types on the server's hot paths (batch results, stored op results):
/// several times faster than `JSONEncoder` for records that carry free-form data.
extension Record {
    /// This record as a JSON value, shaped as PROTOCOL.md's record (tombstones carry no data).
    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "version": .integer(version), "deleted": .bool(deleted)]
        if let updatedAt { object["updatedAt"] = .string(RFC3339.string(from: updatedAt)) }
        if let updatedBy { object["updatedBy"] = .string(updatedBy) }
        if !deleted { object["data"] = .object(data) }
        return .object(object)
    }
}

extension ErrorBody {
    /// This error as a JSON value.
    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["code": .string(code.rawValue), "message": .string(message)]
        if let details { object["details"] = .object(details) }
        return .object(object)
    }
}

extension OperationResult {
    /// This result as a JSON value.
    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["opId": .string(opId), "status": .string(status.rawValue)]
        if let record { object["record"] = record.jsonValue }
        if let current { object["current"] = current.jsonValue }
        if let error { object["error"] = error.jsonValue }
        return .object(object)
    }
}
