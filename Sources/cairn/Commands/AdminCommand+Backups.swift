import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

/// `cairn admin backup` and `cairn admin restore`: a data directory copied while its server serves, and brought back.
extension AdminCommand {
    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Back up a data directory while its server keeps serving: the database and the files, consistent.",
            discussion: """
                Writes cairn.sqlite (SQLite's online backup: every write acknowledged before it began), the files it \
                knows (checked against their sizes and SHA-256) and backup.json into a new or empty directory, and \
                records the backup in the server's database (GET /v1/admin/backups lists it). A server on PostgreSQL is \
                backed up with pg_dump (see README.md, Backups).

                Example:
                  cairn admin --data ./cairn-data backup --to /backups/cairn-2026-11-24
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The backup directory: new, or empty.")
        var to: String

        func run() async throws {
            try options.refusePostgres("backup")
            let started = ContinuousClock.now
            let report = try await CLIError.wrap("cannot back up \(options.data)") {
                try await ServerBackup.run(dataDirectory: URL(fileURLWithPath: options.data), to: URL(fileURLWithPath: to))
            }
            let backup = report.backup
            print("backed up \(options.data) to \(backup.path): database \(backup.databaseBytes) bytes, \(backup.fileCount) files "
                  + "(\(report.fileBytes) bytes), in \(String(format: "%.2f", BenchTiming.seconds(since: started))) s")
            if report.deletedMeanwhile > 0 { print("\(report.deletedMeanwhile) files deleted during the backup are deleted in it too") }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Restore a backup made by `cairn admin backup` into a new data directory, checked, for `cairn serve --data`.",
            discussion: """
                Checks the database (SQLite's integrity_check) and every completed file (size and SHA-256). Apps synced \
                before the backup go on from their cursors; writes made after it are not in it.

                Example:
                  cairn admin --data ./cairn-data-restored restore \\
                    --from /backups/cairn-2026-11-24
                  cairn serve --data ./cairn-data-restored
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The backup directory.")
        var from: String

        func run() async throws {
            try options.refusePostgres("restore")
            let started = ContinuousClock.now
            let report = try await CLIError.wrap("cannot restore \(from) into \(options.data)") {
                try await ServerRestore.run(from: URL(fileURLWithPath: from), into: URL(fileURLWithPath: options.data))
            }
            let backup = report.backup
            print("restored the backup of \(RFC3339.string(from: backup.createdAt)) into \(options.data): database \(backup.databaseBytes) bytes, "
                  + "\(backup.fileCount) files (\(report.fileBytes) bytes), checked, in \(String(format: "%.2f", BenchTiming.seconds(since: started))) s")
        }
    }
}

extension AdminOptions {
    /// Throws, explaining PostgreSQL's own tools, when the options name a PostgreSQL database: it holds the whole
    /// server, files' bytes included, so `pg_dump` backs it up.
    func refusePostgres(_ command: String) throws {
        guard case .postgres = backend else { return }
        throw CLIError("""
            cairn admin \(command) works on a data directory (--data); a server on PostgreSQL keeps everything, files' bytes \
            included, in its database, so PostgreSQL's own tools back it up: pg_dump --format=custom --file=cairn.dump URL \
            and pg_restore --dbname=URL cairn.dump. Cairn needs nothing else (see README.md, Backups)
            """)
    }
}
