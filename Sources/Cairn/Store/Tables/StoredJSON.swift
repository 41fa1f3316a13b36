import CairnProtocol

/// The object a stored JSON text holds (`nil` for `NULL` or text that is not an object).
func decodeObject(_ text: String?) -> [String: JSONValue]? {
    guard let text else { return nil }
    return (try? JSONValue(parsing: Array(text.utf8)))?.objectValue
}

/// The JSON text an object is stored as (`nil` stays `NULL`).
func jsonText(_ object: [String: JSONValue]?) -> String? {
    object.map { JSONValue.object($0).jsonText() }
}
