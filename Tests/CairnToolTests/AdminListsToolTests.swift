import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// `cairn admin` commands about who is there: operators, users, projects, members and clients, removing members and
/// revoking sign-ins, on a data directory and on PostgreSQL.
@Suite("cairn admin: operators and lists", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct AdminListsToolTests {
    /// The storage options of each backend this machine can run: a data directory, and PostgreSQL when installed.
    static func backends(_ data: URL) throws -> [[String]] {
        var backends = [["--data", data.path]]
        if PostgresCluster.isAvailable(for: "the admin tool's PostgreSQL runs") {
            backends.append(["--postgres", try PostgresCluster.shared().makeDatabase()])
        }
        return backends
    }

    @Test("operators are added, granted and revoked; users, projects and members are listed as tables or JSON")
    func lists() async throws {
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        for d in try Self.backends(data) {
            func admin(_ arguments: [String]) async throws -> Tool.Output { try await Tool.run(["admin"] + d + arguments) }
            #expect(try await admin(["add-project", "field"]).status == 0)
            #expect(try await admin(["add-project", "audit"]).status == 0)
            let added = try await admin(["add-user", "opal", "--password", "long enough pass", "--operator"])
            #expect(added.status == 0)
            #expect(added.stdout.contains("added operator opal"))
            for user in ["alice", "bob"] { #expect(try await admin(["add-user", user, "--password", "long enough pass"]).status == 0) }
            #expect(try await admin(["grant", "alice", "--project", "field", "--role", "writer"]).status == 0)
            #expect(try await admin(["grant", "bob", "--project", "field", "--role", "reader"]).status == 0)
            #expect(try await admin(["grant-operator", "bob"]).status == 0)
            #expect(try await admin(["revoke-operator", "bob"]).status == 0)
            let unknown = try await admin(["grant-operator", "nobody"])
            #expect(unknown.status != 0)
            #expect(unknown.stderr.contains("does not exist"))

            let users = try await admin(["list-users"])
            #expect(users.status == 0)
            #expect(users.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) } == [
                ["USER", "OPERATOR", "PROJECTS"], ["alice", "no", "field:writer"], ["bob", "no", "field:reader"], ["opal", "yes"],
            ])
            let json = try await admin(["list-users", "--json"])
            let page = try CairnJSON.decode(AdminPage<UserSummary>.self, from: Array(json.stdout.utf8))
            #expect(page.next == nil)
            #expect(page.items.map(\.name) == ["alice", "bob", "opal"])
            #expect(page.items.last?.isOperator == true)

            let projects = try CairnJSON.decode(AdminPage<ProjectSummary>.self, from: Array(try await admin(["list-projects", "--json"]).stdout.utf8))
            #expect(projects.items.map(\.name) == ["audit", "field"])
            #expect(projects.items.map(\.members) == [0, 2])
            #expect(try await admin(["list-projects"]).stdout.hasPrefix("PROJECT  CREATED"))

            let members = try await admin(["list-members", "--project", "field"])
            #expect(members.stdout == "USER   ROLE\nalice  writer\nbob    reader\n")
            let missing = try await admin(["list-members", "--project", "nope"])
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("project \"nope\" does not exist"))

            let removed = try await admin(["remove-member", "bob", "--project", "field"])
            #expect(removed.status == 0)
            #expect(removed.stdout.contains("removed bob from field"))
            let again = try await admin(["remove-member", "bob", "--project", "field"])
            #expect(again.status != 0)
            #expect(again.stderr.contains("not a member"))
            #expect(try await admin(["remove-member", "bob", "--project", "nope"]).stderr.contains("does not exist"))
            #expect(try await admin(["list-members", "--project", "field", "--json"]).stdout.contains(#""user":"alice""#))
            #expect(try await admin(["list-members", "--project", "field", "--json"]).stdout.contains("bob") == false)
        }
    }

    @Test("clients are listed with how far behind each is, filtered with --behind; sign-ins are revoked")
    func clientsAndSignIns() async throws {
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = data.appendingPathComponent("server").path
        let d = ["--data", server]
        try await Tool.setUpField(d)
        let process = try Tool.start(["serve"] + d + ["--port", "0", "--log-level", "error"],
                                     environment: ProcessInfo.processInfo.environment, output: .pipe)
        let http = TestHTTPClient(baseURL: try await Instances.listeningURL(process))
        let token = try await http.login("alice").accessToken
        let registered = try await http.send(.POST, "/v1/projects/field/clients", token: token, value: ClientRegistrationRequest(device: "iPad", app: "Field"))
        let client = try registered.decode(ClientRegistration.self).clientId
        let writes = (0..<3).map { SyncOperation(opId: newOpID(), collection: "notes", id: "n\($0)", op: .create, data: [:]) }
        #expect(try await http.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: writes)).status == 200)

        let listed = try await Tool.run(["admin"] + d + ["list-clients", "--project", "field", "--json"])
        let page = try CairnJSON.decode(AdminPage<ClientSummary>.self, from: Array(listed.stdout.utf8))
        #expect(page.items.map(\.clientId) == [client])
        #expect(page.items.first?.behind == 3 && page.items.first?.device == "iPad" && page.items.first?.user == "alice")
        let table = try await Tool.run(["admin"] + d + ["list-clients", "--project", "field"])
        #expect(table.stdout.hasPrefix("CLIENT"))
        #expect(table.stdout.contains(client))
        #expect(try await Tool.run(["admin"] + d + ["list-clients", "--project", "field", "--behind", "4"]).stdout == "CLIENT  USER  DEVICE  APP  REGISTERED  LAST SEEN  PULLED  BEHIND\n")
        #expect(try await Tool.run(["admin"] + d + ["list-clients", "--project", "nope"]).status != 0)

        let revoked = try await Tool.run(["admin"] + d + ["revoke-sign-ins", "alice"])
        #expect(revoked.status == 0)
        #expect(revoked.stdout.contains("revoked the sign-ins of alice"))
        #expect(try await http.send(.GET, "/v1/projects/field/schema", token: token).status == 401)
        process.send(SIGTERM)
        #expect(await process.exit() == 0)
    }
}
