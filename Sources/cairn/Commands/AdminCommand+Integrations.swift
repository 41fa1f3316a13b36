import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

/// `cairn admin` commands for other systems: service keys they sign in with, and webhooks that tell them of changes.
extension AdminCommand {
    struct AddServiceKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-service-key",
            abstract: "Make a key another system signs in with (Authorization: Bearer KEY); it is printed once.",
            discussion: """
                Only a hash of the key is kept: store it where the other system reads its secrets. Data rules bind the key \
                like a member of its role, and its writes carry updatedBy "service:NAME". With --json, prints \
                {"name", "role", "key", "createdAt"}.

                Example:
                  cairn admin add-service-key erp --project field --role writer
                """)
        @OptionGroup var options: AdminOptions
        @Argument(help: "The key's name, unique in the project (lowercase letters, digits, _).")
        var name: String
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .long, help: "reader, writer or admin.")
        var role: Role
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let made = try await CLIError.wrap("cannot make service key \(name) in \(project)") {
                try await options.admin().addServiceKey(name: name, project: project, role: role)
            }
            if output.json {
                print(String(decoding: try CairnJSON.encode(made), as: UTF8.self))
            } else {
                print(made.key)
                FileHandle.standardError.write(Data("service key \(name) (\(role.rawValue)) of \(project): keep it now, it is not shown again\n".utf8))
            }
        }
    }

    struct ListServiceKeys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-service-keys", abstract: "List a project's service keys: name, role, when made and last used (never the keys).",
            discussion: "With --json, one JSON document: {\"items\": [...], \"next\": null}.")
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let keys = try await CLIError.wrap("cannot list the service keys of \(project)") { try await options.admin().serviceKeys(project: project) }
            try AdminList.print(keys, json: output.json, ["NAME", "ROLE", "CREATED", "LAST USED"]) { key in
                [key.name, key.role.rawValue, RFC3339.string(from: key.createdAt), key.lastUsedAt.map(RFC3339.string(from:)) ?? "never"]
            }
        }
    }

    struct RevokeServiceKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-service-key",
            abstract: "Revoke a service key: every server instance refuses it from its next request on.",
            discussion: "Example:\n  cairn admin revoke-service-key erp --project field")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The key's name.")
        var name: String
        @Option(name: .long, help: "The project.")
        var project: String

        func run() async throws {
            try await CLIError.wrap("cannot revoke service key \(name) of \(project)") {
                try await options.admin().revokeServiceKey(name: name, project: project)
            }
            print("revoked service key \(name) of \(project)")
        }
    }

    struct AddWebhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-webhook",
            abstract: "Post every change committed from now on to a URL, signed, at least once and in feed order.",
            discussion: """
                Each POST carries {"project", "webhook", "deliveries": [...]} (up to 100 changes) with the headers \
                Cairn-Delivery and Cairn-Signature: sha256=HEX, the HMAC-SHA256 of the body with the secret. Only a 2xx \
                answer moves the webhook on; anything else is retried with backoff (at most 5 minutes apart).

                Example:
                  cairn admin add-webhook erp --project field --url https://erp.example/cairn \\
                    --collection jobs --secret-file erp-webhook.secret
                """)
        @OptionGroup var options: AdminOptions
        @Argument(help: "The webhook's name, unique in the project (lowercase letters, digits, _).")
        var name: String
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .long, help: "Where deliveries are posted (http or https).")
        var url: String
        @Option(name: .customLong("collection"), help: "A collection to deliver (repeat for several); all when none is named.")
        var collections: [String] = []
        @Option(name: .customLong("secret-file"), help: "A file holding the signing secret (at least 16 bytes; a final newline is dropped).")
        var secretFile: String

        func run() async throws {
            let secret = try CLIError.wrap("cannot read the secret file \(secretFile)") {
                try String(contentsOf: URL(fileURLWithPath: secretFile), encoding: .utf8)
            }.trimmingCharacters(in: .newlines)
            let request = NewWebhookRequest(name: name, url: url, collections: collections, secret: secret)
            _ = try await CLIError.wrap("cannot add webhook \(name) to \(project)") { try await options.admin().addWebhook(request, project: project) }
            let what = collections.isEmpty ? "every collection" : collections.joined(separator: ", ")
            print("added webhook \(name) to \(project): changes of \(what) go to \(url)")
        }
    }

    struct ListWebhooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-webhooks", abstract: "List a project's webhooks: name, URL, collections, status.",
            discussion: "With --json, one JSON document: {\"items\": [...], \"next\": null} (webhook-status has the same items).")
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let webhooks = try await CLIError.wrap("cannot list the webhooks of \(project)") { try await options.admin().webhooks(project: project) }
            try AdminList.print(webhooks, json: output.json, ["NAME", "URL", "COLLECTIONS", "STATUS"]) { webhook in
                [webhook.name, webhook.url, webhook.collections.isEmpty ? "*" : webhook.collections.joined(separator: ","), webhook.status]
            }
        }
    }

    struct WebhookStatus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webhook-status",
            abstract: "Show how each webhook of a project stands: delivered, behind, failures and the last error.",
            discussion: """
                STATUS is ok, retrying (failing for less than a day) or failing (for a day or more; it keeps its place \
                and goes on retrying). BEHIND counts the project's versions after the webhook's cursor. With --json, one \
                JSON document: {"items": [...], "next": null}.
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let webhooks = try await CLIError.wrap("cannot read the webhooks of \(project)") { try await options.admin().webhooks(project: project) }
            try AdminList.print(
                webhooks, json: output.json, ["NAME", "STATUS", "CURSOR", "BEHIND", "DELIVERED", "FAILURES", "LAST SUCCESS", "NEXT ATTEMPT", "LAST ERROR"]
            ) { webhook in
                [
                    webhook.name, webhook.status, String(webhook.cursor), String(webhook.behind), String(webhook.delivered),
                    String(webhook.failures), webhook.lastSuccessAt.map(RFC3339.string(from:)) ?? "-",
                    webhook.nextAttemptAt.map(RFC3339.string(from:)) ?? "-", webhook.lastError ?? "-",
                ]
            }
        }
    }

    struct RemoveWebhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-webhook", abstract: "Remove a webhook: no delivery starts after this.",
            discussion: "Example:\n  cairn admin remove-webhook erp --project field")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The webhook's name.")
        var name: String
        @Option(name: .long, help: "The project.")
        var project: String

        func run() async throws {
            try await CLIError.wrap("cannot remove webhook \(name) of \(project)") { try await options.admin().removeWebhook(name: name, project: project) }
            print("removed webhook \(name) of \(project)")
        }
    }
}
