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
            Prints the store's diagnostics: per collection its cursor, last pull and row count; the upload queue and \
            its oldest change; refused uploads and files with the server's errors; recent errors. With --json it \
            prints the report as JSON, for a support ticket: it holds no record data and no secrets.

            Exits 0 when the store is up to date or waiting, 3 when it is retrying or stuck.

            Example:
              cairn status --store field.sqlite
            """)

    @OptionGroup var options: StoreOptions

    @OptionGroup var output: JSONOutputOption

    func run() async throws {
        let client = try await options.open(connect: false)
        let report = try await CLIError.wrap("cannot read the store's state") { try await client.diagnostics() }
        try DiagnosticsText.print(report, store: options.store, json: output.json)
        if report.verdict == .retrying || report.verdict == .stuck { throw ExitCode(3) }
    }
}
