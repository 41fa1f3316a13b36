import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

/// `cairn admin` commands about who is on the server: operators, users, projects, members, clients and sign-ins.
extension AdminCommand {
    struct GrantOperator: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant-operator", abstract: "Make a user a server operator: admin of every project and of the server-wide routes.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user name.")
        var name: String

        func run() async throws {
            try await CLIError.wrap("cannot make \(name) an operator") { try await options.admin().setOperator(name, true) }
            print("\(name) is a server operator")
        }
    }

    struct RevokeOperator: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke-operator", abstract: "Make a server operator an ordinary user again.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user name.")
        var name: String

        func run() async throws {
            try await CLIError.wrap("cannot revoke the operator role of \(name)") { try await options.admin().setOperator(name, false) }
            print("\(name) is no longer a server operator")
        }
    }

    struct ListUsers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-users", abstract: "List the server's users, whether each is an operator, and their projects with roles.",
            discussion: "With --json, one JSON document: {\"items\": [...], \"next\": null}.")
        @OptionGroup var options: AdminOptions
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let admin = try await options.admin()
            let users = try await CLIError.wrap("cannot list users") { try await AdminList.all { try await admin.users(after: $0) } }
            try AdminList.print(users, json: output.json, ["USER", "OPERATOR", "PROJECTS"]) { user in
                [user.name, user.isOperator ? "yes" : "no", user.projects.map { "\($0.name):\($0.role.rawValue)" }.joined(separator: ",")]
            }
        }
    }

    struct ListProjects: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-projects", abstract: "List the server's projects with when each was created, its members and its head version.",
            discussion: "With --json, one JSON document: {\"items\": [...], \"next\": null}.")
        @OptionGroup var options: AdminOptions
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let admin = try await options.admin()
            let projects = try await CLIError.wrap("cannot list projects") { try await AdminList.all { try await admin.projects(after: $0) } }
            try AdminList.print(projects, json: output.json, ["PROJECT", "CREATED", "MEMBERS", "HEAD"]) { project in
                [project.name, RFC3339.string(from: project.createdAt), String(project.members), String(project.headVersion)]
            }
        }
    }

    struct ListMembers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-members", abstract: "List a project's members and their roles.",
            discussion: "With --json, one JSON document: {\"items\": [...], \"next\": null}.")
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let admin = try await options.admin()
            let members = try await CLIError.wrap("cannot list the members of \(project)") {
                try await AdminList.all { try await admin.members(project: project, after: $0) }
            }
            try AdminList.print(members, json: output.json, ["USER", "ROLE"]) { [$0.user, $0.role.rawValue] }
        }
    }

    struct ListClients: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-clients",
            abstract: "List a project's clients (apps on devices): who, which app, when last seen, and how far behind.",
            discussion: """
                BEHIND is how many versions the project's head is ahead of what the client last pulled to the end.

                With --json, one JSON document: {"items": [...], "next": null}.
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .long, help: "Only clients at least this many versions behind the project's head.")
        var behind: Int64 = 0
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let admin = try await options.admin()
            let clients = try await CLIError.wrap("cannot list the clients of \(project)") {
                try await AdminList.all { try await admin.clients(project: project, behind: behind, after: $0) }
            }
            try AdminList.print(clients, json: output.json, ["CLIENT", "USER", "DEVICE", "APP", "REGISTERED", "LAST SEEN", "PULLED", "BEHIND"]) { client in
                [
                    client.clientId, client.user, client.device ?? "-", client.app ?? "-", RFC3339.string(from: client.registeredAt),
                    RFC3339.string(from: client.lastSeenAt), String(client.lastPulledVersion), String(client.behind),
                ]
            }
        }
    }

    struct RemoveMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-member", abstract: "Take a user's role in a project away.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user name.")
        var name: String
        @Option(name: .long, help: "The project.")
        var project: String

        func run() async throws {
            try await CLIError.wrap("cannot remove \(name) from \(project)") { try await options.admin().removeMember(user: name, project: project) }
            print("removed \(name) from \(project)")
        }
    }

    struct RevokeSignIns: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-sign-ins",
            abstract: "End every sign-in of a user: their tokens stop working now, and identity-provider tokens issued before now are refused.",
            discussion: "The user need not have a password here: an identity provider's user (the token's sub) is revoked the same way.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user name.")
        var name: String

        func run() async throws {
            try await CLIError.wrap("cannot revoke the sign-ins of \(name)") { try await options.admin().revokeSignIns(user: name) }
            print("revoked the sign-ins of \(name)")
        }
    }
}

/// Reading every page of an administration list, and printing it as a table or as one JSON document.
enum AdminList {
    /// Every item of a list, page after page.
    static func all<Item: Codable & Sendable & Hashable>(_ page: (String?) async throws -> AdminPage<Item>) async throws -> [Item] {
        var items: [Item] = []
        var after: String?
        repeat {
            let next = try await page(after)
            items += next.items
            after = next.next
        } while after != nil
        return items
    }

    /// Prints `items` as `{"items": [...], "next": null}` with `json`, else as a table of `header` and `row` of each.
    static func print<Item: Codable & Sendable & Hashable>(_ items: [Item], json: Bool, _ header: [String], row: (Item) -> [String]) throws {
        if json {
            Swift.print(String(decoding: try CairnJSON.encode(AdminPage(items: items, next: nil)), as: UTF8.self))
        } else {
            Swift.print(TextTable(header, items.map(row)).text)
        }
    }
}
