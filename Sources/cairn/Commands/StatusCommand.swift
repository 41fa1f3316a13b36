import ArgumentParser
import Cairn
import CairnProtocol
import Foundation

/// `cairn status`: a store's diagnostics, offline.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say whether a local store is up to date, waiting, retrying or stuck, and why (offline).",
        discussion: """
            Prints the store's diagnostics: per collection its cursor, last pull and row count; the upload queue and
            its oldest change; refused uploads and files with the server's errors; recent errors. With --json it
            prints the report as JSON, for a support ticket: it holds no record data and no secrets.

            Exits 0 when the store is up to date or waiting, 3 when it is retrying or stuck.

            Example: cairn status --store field.sqlite
            """)

    @OptionGroup var options: StoreOptions

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    func run() async throws {
        let client = try await options.open(connect: false)
        let report = try await CLIError.wrap("cannot read the store's state") { try await client.diagnostics() }
        if json {
            print(try report.jsonText())
        } else {
            print("\(report.verdict.rawValue): \(report.explanation)")
            print("store \(options.store) of \(report.user) at \(report.server), project \(report.project), schema \(report.schemaVersion.isEmpty ? "-" : report.schemaVersion)")
            print("scheduler: \(report.scheduler.rawValue)" + (report.liveConnected ? ", live connection open" : "")
                  + (report.nextScheduledActionDescription.map { ", next: \($0)" } ?? ""))
            print("queue: \(report.queueDepth) change(s)" + (report.oldestPendingAgeSeconds.map { String(format: ", oldest %.0f s old", $0) } ?? ""))
            for collection in report.collections {
                let age = collection.lastPullAgeSeconds.map { String(format: "%.0f s ago", $0) } ?? "never"
                print("  \(collection.name): \(collection.rows) rows, last pull \(age)\(collection.partial ? ", through download queries" : "")"
                      + (collection.firstPullCompleted ? "" : ", first pull not complete"))
            }
            for failed in report.failedUploads {
                print("  refused: \(failed.operation) \(failed.collection)/\(failed.id): \(failed.error.code.rawValue): \(failed.error.message)")
            }
            for file in report.failedFiles {
                print("  file stopped: \(file.name) (\(file.localID)): \(file.error.map { "\($0.code.rawValue): \($0.message)" } ?? "-")")
            }
            for error in report.recentErrors.prefix(3) {
                print("  error at \(RFC3339.string(from: error.at)): \(error.message)")
            }
        }
        if report.verdict == .retrying || report.verdict == .stuck { throw ExitCode(3) }
    }
}
