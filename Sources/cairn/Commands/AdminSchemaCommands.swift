import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

extension AdminCommand {
    /// `cairn admin schema diff|status`: what a new schema would change, and the project's schema versions.
    struct SchemaCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "schema",
            abstract: "Compare a schema file with a project's schema, or show its schema versions and migrations.",
            subcommands: [Diff.self, Status.self])

        struct Diff: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print what setting a schema file would change, and whether it is breaking.",
                discussion: """
                    Each change is listed as additive, breaking (declared by a migration step) or breaking and MISSING a step. \
                    Exits with status 1 when set-schema would refuse the file.
                    """)
            @OptionGroup var options: AdminOptions
            @Option(name: .long, help: "The project.")
            var project: String
            @Argument(help: "The schema JSON file.")
            var file: String

            func run() async throws {
                let schema = try SchemaFile.read(file)
                let admin = try await options.admin()
                let diff = try await CLIError.wrap("cannot compare with the schema of \(project)") { try await admin.schemaDiff(project: project, schema) }
                for change in diff.changes {
                    let label = !change.isBreaking ? "additive" : change.isDeclared ? "breaking, declared" : "breaking, MISSING a step"
                    print("\(label): \(change.message)")
                }
                if diff.changes.isEmpty { print("no changes") }
                let missing = diff.missing
                if !missing.isEmpty {
                    print("refused: declare a migration for \(missing.count) breaking change\(missing.count == 1 ? "" : "s")")
                    throw ExitCode(1)
                }
                print(diff.isBreaking ? "breaking, with every step declared: set-schema migrates the stored records" : "additive: old app builds keep syncing")
            }
        }

        struct Status: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List a project's schema versions and the progress of their migrations.")
            @OptionGroup var options: AdminOptions
            @Option(name: .long, help: "The project.")
            var project: String

            func run() async throws {
                let admin = try await options.admin()
                let versions = try await CLIError.wrap("cannot read the schemas of \(project)") { try await admin.schemaVersions(project: project) }
                let current = versions.last?.schema
                var rows: [[String]] = []
                for version in versions {
                    let migration = version.migration
                    rows.append([
                        "\(version.schema.number)", String(version.schema.version.prefix(12)), RFC3339.string(from: version.createdAt),
                        "\(version.schema.migrations.count)", migration.state.rawValue, "\(migration.migrated)",
                    ])
                }
                print(TextTable(["NUMBER", "VERSION", "SET AT", "STEPS", "MIGRATION", "MIGRATED"], rows).text)
                if let current {
                    print("current schema number \(current.number); app builds from number \(current.minimumSchemaVersion ?? 0) may sync")
                }
            }
        }
    }
}

/// A schema file as `cairn admin set-schema` and `schema diff` read it: JSON whose every key Cairn knows
/// (``SchemaKeys``), decoded.
enum SchemaFile {
    /// The schema in `file`; a clear error for an unreadable file, a key no schema level knows (with the nearest known
    /// one), or a wrong shape.
    static func read(_ file: String) throws -> Schema {
        let data = try CLIError.wrap("cannot read the schema file \(file)") { try Data(contentsOf: URL(fileURLWithPath: file)) }
        return try CLIError.wrap("the schema file \(file) is not a valid schema") {
            try SchemaKeys.check(try JSONValue(parsing: Array(data)))
            return try CairnJSON.decode(Schema.self, from: data)
        }
    }
}
