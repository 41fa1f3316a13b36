import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

struct AdminOptions: ParsableArguments {
    @Option(name: .long, help: "The server's data directory.")
    var data: String = "./cairn-data"

    @Option(name: .long, help: "The server's PostgreSQL database, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (or CAIRN_POSTGRES_URL), instead of --data.")
    var postgres: String?

    /// The backend the options name: the PostgreSQL database when one is named, else the data directory.
    var backend: ServerBackend {
        ServerBackend(dataDirectory: URL(fileURLWithPath: data), postgresURL: PostgresDatabase.url(postgres))
    }

    /// Opens the server's storage (creating the data directory's database if needed).
    func admin() async throws -> ServerAdmin {
        let backend = backend
        let what = if case .postgres = backend { "the PostgreSQL database" } else { "the data directory \(data)" }
        return try await CLIError.wrap("cannot open \(what)") { ServerAdmin(storage: try await backend.open().storage) }
    }
}

struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage a server's projects, users, roles and schemas directly in its data directory or PostgreSQL database.",
        discussion: """
            No server needs to run. With --postgres URL (or CAIRN_POSTGRES_URL) instead of --data, the same commands manage \
            a server whose state is in PostgreSQL.

            Example:
              cairn admin --data ./cairn-data add-project field
              cairn admin --data ./cairn-data add-user alice --password 'a long password'
              cairn admin --data ./cairn-data grant alice --project field --role writer
              cairn admin --data ./cairn-data set-schema --project field schema.json
              cairn admin --data ./cairn-data schema diff --project field schema.json
              cairn admin --data ./cairn-data schema status --project field
              cairn admin --data ./cairn-data limits --project field \\
                --file-bytes 52428800 --project-bytes 10737418240
              cairn admin --data ./cairn-data list-clients --project field --behind 1000
              cairn admin --data ./cairn-data diagnostics --project field \\
                --client c-5e2a9c41-...
              cairn admin --data ./cairn-data remove-client --project field c-5e2a9c41-...
              cairn admin --data ./cairn-data backup --to /backups/cairn-2026-11-24
              cairn admin --data ./cairn-data add-service-key erp --project field --role writer
              cairn admin --data ./cairn-data add-webhook erp --project field \\
                --url https://erp.example/cairn --secret-file erp.secret
              cairn admin --postgres postgres://cairn@db.internal/cairn create-views --project field --schema reports
            """,
        subcommands: [
            AddProject.self, AddUser.self, SetPassword.self, Grant.self, SetSchema.self, SchemaCommand.self, SetClaims.self, Claims.self, Explain.self, Limits.self,
            Migrate.self, GrantOperator.self, RevokeOperator.self, ListUsers.self, ListProjects.self, ListMembers.self, ListClients.self,
            RemoveMember.self, RevokeSignIns.self, RemoveClient.self, ClientDiagnosticsCommand.self, Backup.self, Restore.self,
            AddServiceKey.self, ListServiceKeys.self, RevokeServiceKey.self, AddWebhook.self, ListWebhooks.self, WebhookStatus.self,
            RemoveWebhook.self,
            ActionSecretCommand.self, CreateViews.self,
        ])

    /// `--data` may come before the subcommand, as in `cairn admin --data DIR add-project NAME`.
    @OptionGroup var options: AdminOptions

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Copy a server's whole state, files included, from its data directory into PostgreSQL.",
            discussion: """
                Versions, cursors, tokens and clients are kept: apps go on syncing from where they were, without a new \
                snapshot, once they reach the PostgreSQL servers. Stop the server that uses the data directory first, \
                and start the PostgreSQL servers after. An interrupted run can be run again: it goes on where it stopped.

                Example:
                  cairn admin migrate --from-data ./cairn-data \\
                    --to-postgres postgres://cairn@db.internal/cairn
                """)
        @Option(name: .customLong("from-data"), help: "The data directory of the server to move.")
        var fromData: String
        @Option(name: .customLong("to-postgres"), help: "The PostgreSQL database, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
        var toPostgres: String

        func run() async throws {
            let report = try await CLIError.wrap("cannot migrate \(fromData)") {
                try await ServerMigration.run(from: .sqlite(dataDirectory: URL(fileURLWithPath: fromData)), to: .postgres(url: toPostgres)) {
                    print($0)
                }
            }
            let rows = report.rows.values.reduce(0, +)
            print("migrated \(rows) rows and \(report.files) files (\(report.bytes) bytes) to PostgreSQL")
        }
    }

    struct AddProject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-project", abstract: "Create a project with an empty schema.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The project name: lowercase letters, digits and _, starting with a letter.")
        var name: String

        func run() async throws {
            try await CLIError.wrap("cannot add project \(name)") { try await options.admin().addProject(name) }
            print("added project \(name)")
        }
    }

    struct AddUser: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-user", abstract: "Create a user who signs in with a password.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user name.")
        var name: String
        @Option(name: .long, help: "The password (8 to 72 bytes).")
        var password: String
        @Flag(name: .customLong("operator"), help: "Make the user a server operator: admin of every project and of the server-wide routes.")
        var isOperator = false

        func run() async throws {
            try await CLIError.wrap("cannot add user \(name)") { try await options.admin().addUser(name, password: password, isOperator: isOperator) }
            print(isOperator ? "added operator \(name)" : "added user \(name)")
        }
    }

    struct SetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-password", abstract: "Replace a user's password.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user name.")
        var name: String
        @Option(name: .long, help: "The new password (8 to 72 bytes).")
        var password: String

        func run() async throws {
            try await CLIError.wrap("cannot set the password of \(name)") { try await options.admin().setPassword(name, password: password) }
            print("set the password of \(name)")
        }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a user a role in a project: reader (pull), writer (+ push), admin (+ schema).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user name.")
        var name: String
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .long, help: "reader, writer or admin.")
        var role: String

        func validate() throws {
            guard Role(rawValue: role) != nil else { throw ValidationError("--role must be reader, writer or admin, not \(role)") }
        }

        func run() async throws {
            try await CLIError.wrap("cannot grant \(role) in \(project) to \(name)") {
                try await options.admin().grant(user: name, project: project, role: Role(rawValue: role)!)
            }
            print("granted \(role) in \(project) to \(name)")
        }
    }

    struct SetSchema: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-schema",
            abstract: "Set a project's schema from a JSON file: additive changes, or breaking ones with their migration steps.",
            discussion: """
                The file holds {"collections": [{"name", "fields": [{"name", "type", "required"?}], "indexes", "conflictPolicy"}], \
                "migrations"?: [...]} as PROTOCOL.md describes. Field types: string, integer, number, boolean, datetime, json, file. \
                Each schema set gets the next number. A breaking change (a removed, renamed or retyped field, a removed \
                collection, a new required field, a tighter conflict policy) is refused unless "migrations" declares its steps:
                  {"collection": "jobs", "rename": {"from": "score", "to": "rating"}}
                  {"collection": "jobs", "convert": {"field": "count", "to": "number"}}
                  {"collection": "jobs", "drop": {"field": "legacy"}}
                  {"collection": "jobs", "fill": {"field": "priority", "value": 0}}

                The stored records are then migrated before the command returns. --minimum-version N refuses app builds \
                made for an older schema number (426 upgrade_required); without a file it changes only that.
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .customLong("minimum-version"), help: "The oldest schema number app builds may sync with.")
        var minimumVersion: Int?
        @Argument(help: "The schema JSON file (optional with --minimum-version).")
        var file: String?

        func run() async throws {
            let admin = try await options.admin()
            var schema: Schema
            if let file {
                schema = try SchemaFile.read(file)
            } else if minimumVersion != nil {
                schema = try await CLIError.wrap("cannot read the schema of \(project)") {
                    guard let current = try await admin.storage.schema(project: project) else {
                        throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
                    }
                    return current
                }
                schema.migrations = []
            } else {
                throw CLIError("give a schema file, --minimum-version N, or both")
            }
            if let minimumVersion { schema.minimumSchemaVersion = minimumVersion }
            let stored = try await CLIError.wrap("cannot set the schema of \(project)") { try await admin.setSchema(project: project, schema) }
            var line = "set the schema of \(project): \(stored.collections.count) collections, version \(stored.version.prefix(12)), number \(stored.number)"
            if let minimum = stored.minimumSchemaVersion { line += ", minimum version \(minimum)" }
            print(line)
            if !stored.migrations.isEmpty, let version = try await admin.schemaVersions(project: project).last(where: { $0.schema.number == stored.number }) {
                print("migrated \(version.migration.migrated) records (\(stored.migrations.count) steps)")
            }
        }
    }

    struct Limits: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set a project's file limits: the largest file and the bytes of files it may hold.",
            discussion: "Without a value, the server's defaults apply (1 GiB per file, 20 GiB per project). Pass 'default' to go back to them.")
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .customLong("file-bytes"), help: "The largest file, in bytes, or 'default'.")
        var fileBytes: String?
        @Option(name: .customLong("project-bytes"), help: "The most bytes of files the project holds, or 'default'.")
        var projectBytes: String?

        func run() async throws {
            let admin = try await options.admin()
            var limits = try await CLIError.wrap("cannot read the limits of \(project)") { try await admin.fileLimits(project: project) }
            if let fileBytes { limits.maximumFileBytes = try Self.bytes(fileBytes, "--file-bytes") }
            if let projectBytes { limits.maximumProjectBytes = try Self.bytes(projectBytes, "--project-bytes") }
            if fileBytes != nil || projectBytes != nil {
                let changed = limits
                try await CLIError.wrap("cannot set the limits of \(project)") { try await admin.setFileLimits(project: project, changed) }
            }
            print("\(project): files of at most \(limits.maximumFileBytes.map(String.init) ?? "the server's default"), "
                  + "\(limits.maximumProjectBytes.map(String.init) ?? "the server's default") bytes in all")
        }

        static func bytes(_ text: String, _ option: String) throws -> Int64? {
            if text == "default" { return nil }
            guard let value = Int64(text), value >= 0 else { throw CLIError("\(option) takes a number of bytes or 'default'") }
            return value
        }
    }
}
