extension ErrorBody {
    /// This error as a JSON value.
    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["code": .string(code.rawValue), "message": .string(message)]
        if let details { object["details"] = .object(details) }
        return .object(object)
    }
}
