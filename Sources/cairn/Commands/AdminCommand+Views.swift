import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

/// `cairn admin create-views`: reporting views of a project's collections, on PostgreSQL.
extension AdminCommand {
    struct CreateViews: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-views",
            abstract: "Create one PostgreSQL view per ordinary collection of a project, with typed columns, for reporting tools.",
            discussion: """
                Each view has the columns id, version, updated_at (timestamptz) and updated_by, then one column per field in \
                its natural type (text, bigint, double precision, boolean, timestamptz, jsonb); deleted records are left out, \
                and a value that does not fit its field's type reads as NULL. Run it again after a schema change: the views \
                it made before in that schema are replaced. Collections kept in tables of their own ("table" in the schema) \
                are tables already and get no view. PostgreSQL only.

                Example:
                  cairn admin --postgres postgres://cairn@db.internal/cairn create-views --project field --schema reports
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .long, help: "The PostgreSQL schema the views go into (default: the project's name).")
        var schema: String?

        func run() async throws {
            let views = try await CLIError.wrap("cannot create the views of \(project)") {
                try await options.admin().createViews(project: project, in: schema)
            }
            for view in views { print("created view \(view)") }
            print("created \(views.count) view(s) of \(project)")
        }
    }
}
