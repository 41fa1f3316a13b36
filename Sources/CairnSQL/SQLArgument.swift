import GRDB

/// A value bound to a placeholder of compiled SQL.
package enum SQLArgument: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

extension SQLArgument {
    /// The GRDB value of this argument, for the SQLite stores of both sides.
    package var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let int): return int.databaseValue
        case .real(let double): return double.databaseValue
        case .text(let text): return text.databaseValue
        }
    }
}
