import CairnProtocol

extension AccessControl {
    /// A collection kept in a PostgreSQL table reads and writes a table of the database, beyond the project: only a
    /// server operator may change which collections live in which tables (`403 forbidden` for a project admin; the
    /// same tables again pass). `cairn admin` works on the database directly and needs no such check.
    func checkTables(of schema: Schema, replacing current: Schema, _ context: CairnRequestContext) async throws {
        func tables(_ schema: Schema) -> Set<String> { Set(schema.collections.compactMap { c in c.table.map { "\(c.name)=\($0)" } }) }
        guard tables(schema) != tables(current) else { return }
        guard let identity = context.identity else { throw ErrorBody.unauthorized() }
        guard try await isOperator(identity) else {
            throw ErrorBody.forbidden(
                "collections in PostgreSQL tables (\"table\") reach beyond the project: only a server operator may change them; \(identity.user) is not one")
        }
    }
}
