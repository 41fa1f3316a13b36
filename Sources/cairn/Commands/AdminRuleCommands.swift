import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

extension Role: ExpressibleByArgument {}

extension AdminCommand {
    /// Claims given on the command line: a JSON object.
    static func claims(_ text: String, what: String) throws -> [String: JSONValue] {
        try CLIError.wrap("\(what) are not a JSON object") { () throws -> [String: JSONValue] in
            guard case .object(let claims) = try JSONValue(parsing: Array(text.utf8)) else { throw CLIError("write them as {\"NAME\": VALUE}") }
            return claims
        }
    }

    struct SetClaims: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-claims",
            abstract: "Set the claims a member's data rules read as claims.NAME (for users who sign in with a Cairn password).",
            discussion: """
                JSON is an object; {} clears the claims. Users who sign in through an identity provider bring their own \
                claims in their token.

                Example:
                  cairn admin --data ./cairn-data set-claims ana \\
                    --project field '{"regions": ["north", "east"]}'
                """)
        @OptionGroup var options: AdminOptions
        @Argument(help: "The member.")
        var user: String
        @Option(name: .long, help: "The project.")
        var project: String
        @Argument(help: "The claims, a JSON object.")
        var json: String

        func run() async throws {
            let claims = try AdminCommand.claims(json, what: "the claims")
            try await CLIError.wrap("cannot set the claims of \(user) in \(project)") {
                try await options.admin().setClaims(user: user, project: project, claims)
            }
            print("set \(claims.count) claims of \(user) in \(project)")
        }
    }

    struct Claims: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "claims", abstract: "Print the claims set for a member, as JSON.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The member.")
        var user: String
        @Option(name: .long, help: "The project.")
        var project: String

        func run() async throws {
            let claims = try await CLIError.wrap("cannot read the claims of \(user) in \(project)") {
                try await options.admin().claims(user: user, project: project)
            }
            print(JSONValue.object(claims).jsonText())
        }
    }

    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explain",
            abstract: "Say whether a user can read and write a record, and which rule and condition decide.",
            discussion: """
                Prints the user's role and claims, then each rule's verdict, the conditions with the user's values, and the \
                ones that decide. --json prints the same as GET /v1/projects/P/explain.

                Example:
                  cairn admin --data ./cairn-data explain --project field \\
                    --user ana --collection jobs --id j-1
                """)
        @OptionGroup var options: AdminOptions
        @Option(name: .long, help: "The project.")
        var project: String
        @Option(name: .long, help: "The user.")
        var user: String
        @Option(name: .long, help: "The collection.")
        var collection: String
        @Option(name: .long, help: "The record's id.")
        var id: String
        @Option(name: .long, help: "A role to use instead of the stored one (an identity-provider user's roles claim): reader, writer or admin.")
        var role: Role?
        @Option(name: .long, help: "Claims to use instead of the stored ones (an identity-provider user's token claims), as a JSON object.")
        var claims: String?
        @OptionGroup var output: JSONOutputOption

        func run() async throws {
            let override = try claims.map { try AdminCommand.claims($0, what: "--claims") }
            let explanation = try await CLIError.wrap("cannot explain \(collection) \(id) for \(user)") {
                try await options.admin().explain(project: project, user: user, collection: collection, id: id, role: role, claims: override)
            }
            if output.json {
                print(String(decoding: try CairnJSON.encode(explanation), as: UTF8.self))
                return
            }
            print("user \(user): \(explanation.role.map { "\($0.rawValue) of \(project)" } ?? "not a member of \(project)")")
            print("claims: \(JSONValue.object(explanation.claims).jsonText())")
            print("record \(collection) \(id): \(explanation.version.map { "version \($0)" } ?? "no live record")")
            for (kind, verdict) in [("read", explanation.read), ("write", explanation.write)] {
                print("\(kind): \(verdict.allowed ? "allowed" : "refused"): \(verdict.reason)")
                for condition in verdict.conditions {
                    let mark = condition.decides ? "*" : " "
                    print("  \(mark) \(condition.path): \(condition.bound.jsonValue.jsonText()) -> \(condition.matches ? "holds" : "does not hold")")
                }
            }
        }
    }
}
