import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

/// `cairn admin action-secret`: the secret a project's action calls are signed with, for its backends.
extension AdminCommand {
    struct ActionSecretCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "action-secret",
            abstract: "Print the secret a project's action calls are signed with (Cairn-Signature), for the actions' backends.",
            discussion: """
                The server makes it the first time it is needed and keeps it; every server instance signs with the same one. \
                A backend checks each call's Cairn-Signature header: sha256= and the hex HMAC-SHA256 of the body with it.

                Example:
                  cairn admin --data ./cairn-data action-secret --project field
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String

        func run() async throws {
            print(try await CLIError.wrap("cannot read the action secret of \(project)") {
                try await options.admin().actionSecret(project: project)
            })
        }
    }
}
