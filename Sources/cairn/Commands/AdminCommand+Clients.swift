import ArgumentParser
import Cairn
import CairnProtocol
import CairnServer
import Foundation

/// `cairn admin` commands about one client of a project: removing it and reading the diagnostics it uploaded.
extension AdminCommand {
    struct RemoveClient: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-client",
            abstract: "Remove a client (an app on a device) from a project: it is no longer listed, and its diagnostics go with it.",
            discussion: "For a device that is lost or retired.\n\nExample:\n  cairn admin remove-client --project field c-5e2a9c41-...")
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @Argument(help: "The client id (see list-clients).")
        var clientID: String

        func run() async throws {
            try await CLIError.wrap("cannot remove client \(clientID) from \(project)") {
                try await options.admin().removeClient(project: project, clientID: clientID)
            }
            print("removed client \(clientID) from \(project)")
        }
    }

    struct ClientDiagnosticsCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "diagnostics",
            abstract: "Print the latest diagnostics report a client uploaded (cairn diagnostics --upload, client.uploadDiagnostics()).",
            discussion: """
                With --json, prints {"client", "uploadedAt", "report"}.

                Example:
                  cairn admin diagnostics --project field --client c-5e2a9c41-...
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .long, help: "The client id (see list-clients).")
        var client: String
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let stored = try await CLIError.wrap("cannot read the diagnostics of client \(client) in \(project)") {
                try await options.admin().diagnostics(project: project, clientID: client)
            }
            if output.json {
                print(String(decoding: try CairnJSON.encode(stored), as: UTF8.self))
                return
            }
            let about = stored.client
            let header = "client \(about.clientId) of \(about.user)" + (about.device.map { " on \($0)" } ?? "") + (about.app.map { ", app \($0)" } ?? "")
                + ", uploaded at \(RFC3339.string(from: stored.uploadedAt)), last seen \(RFC3339.string(from: about.lastSeenAt)), \(about.behind) versions behind"
            guard let report = try? CairnJSON.decode(Diagnostics.self, from: stored.report.jsonData()) else {
                // Another client's own report shape: shown as it came.
                print(header)
                print(String(decoding: try JSONSerialization.data(
                    withJSONObject: try JSONSerialization.jsonObject(with: stored.report.jsonData()), options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
                return
            }
            print(DiagnosticsText.lines(report, about: header + "\nreport " + DiagnosticsText.store(report)).joined(separator: "\n"))
        }
    }
}
