import ArgumentParser
import Cairn
import CairnProtocol
import Foundation

/// `cairn diagnostics`: a store's diagnostics report, and sending it to the server for support.
struct DiagnosticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagnostics",
        abstract: "Print a local store's diagnostics report, and with --upload send it to the server for support.",
        discussion: """
            The report holds ids, counts, times and errors, never record data, tokens or keys; the uploaded copy \
            withholds file names too. The server keeps each client's latest report, and an operator or a project \
            admin reads it with `cairn admin diagnostics --project P --client ID` (or over \
            GET /v1/projects/P/clients/ID/diagnostics). With --json it prints the report as JSON.

            Example:
              CAIRN_PASSWORD=... cairn diagnostics --store field.sqlite --upload
            """)

    @OptionGroup var options: StoreOptions

    @Flag(name: .long, help: "Send the report to the server (needs the network and CAIRN_PASSWORD).")
    var upload = false

    @OptionGroup var output: JSONOutputOption

    func run() async throws {
        let client = try await options.open(connect: upload)
        let report = try await CLIError.wrap("cannot read the store's state") { try await client.diagnostics() }
        try DiagnosticsText.print(report, store: options.store, json: output.json)
        guard upload else { return }
        let receipt = try await CLIError.wrap("cannot upload the diagnostics") { try await client.uploadDiagnostics() }
        let message = "uploaded the diagnostics of client \(receipt.clientId) (\(receipt.bytes) bytes) at \(RFC3339.string(from: receipt.uploadedAt))"
        if output.json {
            FileHandle.standardError.write(Data((message + "\n").utf8))
        } else {
            print(message)
        }
    }
}

/// `cairn unregister`: removes a store's client from the server.
struct UnregisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unregister",
        abstract: "Remove a local store's client from the server, so it no longer counts as a device of the project.",
        discussion: """
            Queued changes and files are uploaded first; if any stay (offline, or refused by the server) nothing is \
            removed and it exits 1, unless --discard-pending drops them. With --delete-store the store and its files \
            are deleted too; without it the store stays, and its next sync registers it again as a new client.

            Example:
              CAIRN_PASSWORD=... cairn unregister --store field.sqlite --delete-store
            """)

    @OptionGroup var options: StoreOptions

    @Flag(name: .customLong("delete-store"), help: "Delete the local store and its files afterwards.")
    var deleteStore = false

    @Flag(name: .customLong("discard-pending"), help: "Drop changes and files that were not uploaded instead of refusing.")
    var discardPending = false

    func run() async throws {
        let client = try await options.open(connect: true)
        let id = client.clientID ?? "-"
        try await CLIError.wrap("cannot unregister client \(id)") {
            try await client.unregister(deleteStore: deleteStore, discardingPendingChanges: discardPending)
        }
        print("unregistered client \(id) from \(client.configuration.project) at \(client.configuration.serverURL.absoluteString); "
              + (deleteStore ? "deleted the store \(options.store)" : "the store stays at \(options.store)"))
    }
}
