/// How compiled SQL reads one field: as an SQL scalar (strings, numbers, 1/0 for booleans, JSON text for
/// arrays and objects), and as a JSON document plus path for `contains`.
package struct FieldAccess: Sendable, Hashable {
    /// An expression giving the field's SQL value, `NULL` when absent.
    package var scalar: String
    /// An expression giving JSON text that holds the field.
    package var jsonDocument: String
    /// The JSON path of the field inside `jsonDocument`, such as `$.tags` or `$`.
    package var jsonPath: String

    package init(scalar: String, jsonDocument: String, jsonPath: String) {
        self.scalar = scalar
        self.jsonDocument = jsonDocument
        self.jsonPath = jsonPath
    }
}

/// A filter compiled to a parameterised SQL expression: values are never spliced into the SQL text.
package struct CompiledFilter: Sendable, Hashable {
    /// The boolean SQL expression, with the dialect's placeholders.
    package var sql: String
    /// The values for the placeholders, in order.
    package var arguments: [SQLArgument]

    package init(sql: String, arguments: [SQLArgument]) {
        self.sql = sql
        self.arguments = arguments
    }
}
