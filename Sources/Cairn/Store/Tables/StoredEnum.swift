import CairnProtocol

/// Reads a value an enum's raw value was stored as; a value this SDK does not know (a store written by a newer
/// Cairn) is `store_failed` naming the column, never a crash or a silently wrong case.
enum StoredEnum {
    static func read<Value: RawRepresentable>(_ raw: String, column: String) throws -> Value where Value.RawValue == String {
        guard let value = Value(rawValue: raw) else {
            throw CairnError(.storeFailed, "\(column) holds \"\(raw)\", which this version of Cairn does not know: update the app")
        }
        return value
    }
}
