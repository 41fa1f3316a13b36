import CairnProtocol

extension ServerAdmin {
    /// Makes one reporting view per ordinary collection of `project` in the PostgreSQL schema `viewSchema` (the
    /// project's name when `nil`), replacing those made before; returns their qualified names. PostgreSQL only:
    /// `validation_failed` on SQLite.
    ///
    /// ```swift
    /// let views = try await admin.createViews(project: "field", in: "reports")   // ["reports.jobs", ...]
    /// ```
    public func createViews(project: String, in viewSchema: String? = nil) async throws -> [String] {
        guard let postgres = storage as? PostgresStorage else {
            throw ErrorBody.validation(
                "reporting views are PostgreSQL views: run with --postgres URL (this server keeps its data in SQLite)", field: "schema")
        }
        return try await postgres.createViews(project: project, in: viewSchema ?? project)
    }
}
