import CairnProtocol
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Makes the reporting views of `project` (``ReportingViews``) in the PostgreSQL schema `viewSchema`, in one
    /// transaction: the views Cairn made there for the project before are dropped first, so a collection renamed or
    /// removed leaves no view behind. Returns the views' qualified names, by name.
    public func createViews(project: String, in viewSchema: String) async throws -> [String] {
        guard let schema = try await self.schema(project: project) else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
        guard TableName.isIdentifier(viewSchema), !viewSchema.hasPrefix("pg_"), viewSchema != "information_schema" else {
            throw ErrorBody.validation(
                "schema \"\(viewSchema)\" must be lowercase letters, digits and _ (not starting with a digit), and not PostgreSQL's own",
                field: "schema")
        }
        return try await Self.transaction(client, logger: logger) { connection in
            let cairnSchema = try await Self.cairnSchema(connection, logger: logger)
            let views = ReportingViews(project: project, schema: schema, viewSchema: viewSchema, cairnSchema: cairnSchema)
            _ = try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \"\(viewSchema)\""), logger: logger)
            var old: [String] = []
            for try await name in try await connection.query(
                """
                SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = \(viewSchema) AND c.relkind = 'v' AND obj_description(c.oid, 'pg_class') = \(views.marker)
                """, logger: logger
            ).decode(String.self) {
                old.append(name)
            }
            for name in old {
                _ = try await connection.query(PostgresQuery(unsafeSQL: "DROP VIEW \"\(viewSchema)\".\"\(name)\""), logger: logger)
            }
            var made: [String] = []
            for collection in views.collections {
                do {
                    _ = try await connection.query(PostgresQuery(unsafeSQL: views.view(of: collection)), logger: logger)
                } catch let error as PSQLError {
                    throw ErrorBody.validation(
                        "cannot create the view \(viewSchema).\(collection.name): \(Self.describe(error))", field: "schema")
                }
                _ = try await connection.query(
                    PostgresQuery(unsafeSQL: "COMMENT ON VIEW \"\(viewSchema)\".\"\(collection.name)\" IS \(TableCollectionSQL.literal(views.marker))"),
                    logger: logger)
                made.append("\(viewSchema).\(collection.name)")
            }
            return made
        }
    }
}
