import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// `cairn diagnostics --upload`, `cairn admin diagnostics`, `cairn unregister` and `cairn admin remove-client`, as a
/// person runs them against `cairn serve`.
@Suite("cairn: support commands", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct SupportToolTests {
    @Test("a store uploads its diagnostics, an operator reads them with cairn admin; unregister and remove-client drop clients")
    func supportCommands() async throws {
        let folder = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let d = ["--data", folder.appendingPathComponent("server").path]
        try await Tool.setUpField(d)
        let process = try Tool.start(["serve"] + d + ["--port", "0", "--log-level", "error"],
                                     environment: ProcessInfo.processInfo.environment, output: .pipe)
        defer { process.send(SIGTERM); _ = process.waitUntilExit() }
        let url = try await Instances.listeningURL(process)
        let password = ["CAIRN_PASSWORD": TestServer.password]
        let store = folder.appendingPathComponent("field.sqlite").path
        let marker = "MARKER-\(UUID().uuidString.prefix(8))"
        let synced = try await Tool.run(
            ["sync", "--store", store, "--server", url.absoluteString, "--project", "field", "--user", "alice"], environment: password)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try await Tool.run(["put", "--store", store, "notes", "n1", #"{"title": "\#(marker)"}"#]).status == 0)

        let uploaded = try await Tool.run(["diagnostics", "--store", store, "--upload"], environment: password)
        #expect(uploaded.status == 0, "\(uploaded.stderr)")
        #expect(uploaded.stdout.hasPrefix("waiting: 1 change wait"))
        #expect(uploaded.stdout.contains("uploaded the diagnostics of client c-"))
        let listed = try await Tool.run(["admin"] + d + ["list-clients", "--project", "field", "--json"])
        let client = try #require(try CairnJSON.decode(AdminPage<ClientSummary>.self, from: Array(listed.stdout.utf8)).items.first?.clientId)

        let read = try await Tool.run(["admin"] + d + ["diagnostics", "--project", "field", "--client", client])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.hasPrefix("waiting: 1 change wait"))
        #expect(read.stdout.contains("client \(client) of alice on "))
        #expect(read.stdout.contains("queue: 1 change(s)"))
        let json = try await Tool.run(["admin"] + d + ["diagnostics", "--project", "field", "--client", client, "--json"])
        let stored = try CairnJSON.decode(ClientDiagnostics.self, from: Array(json.stdout.utf8))
        #expect(stored.client.clientId == client && stored.report["queueDepth"] == 1)
        #expect(!json.stdout.contains(marker) && !read.stdout.contains(marker))
        let missing = try await Tool.run(["admin"] + d + ["diagnostics", "--project", "field", "--client", "c-nope"])
        #expect(missing.status != 0 && missing.stderr.contains("has no client"))

        // unregister pushes the change first, then removes the client and, with --delete-store, the store.
        let unregistered = try await Tool.run(["unregister", "--store", store, "--delete-store"], environment: password)
        #expect(unregistered.status == 0, "\(unregistered.stderr)")
        #expect(unregistered.stdout.contains("unregistered client \(client)"))
        #expect(!FileManager.default.fileExists(atPath: store))
        let http = TestHTTPClient(baseURL: url)
        let token = try await http.login("alice").accessToken
        #expect(try await http.send(.GET, "/v1/projects/field/collections/notes/changes", token: token).decode(ChangesPage.self).changes.map(\.id) == ["n1"])
        let after = try await Tool.run(["admin"] + d + ["list-clients", "--project", "field", "--json"])
        #expect(try CairnJSON.decode(AdminPage<ClientSummary>.self, from: Array(after.stdout.utf8)).items.isEmpty)

        // An operator removes a lost device's client.
        let registered = try await http.send(.POST, "/v1/projects/field/clients", token: token, value: ClientRegistrationRequest(device: "lost phone"))
        let lost = try registered.decode(ClientRegistration.self).clientId
        let removed = try await Tool.run(["admin"] + d + ["remove-client", "--project", "field", lost])
        #expect(removed.status == 0 && removed.stdout.contains("removed client \(lost) from field"))
        let again = try await Tool.run(["admin"] + d + ["remove-client", "--project", "field", lost])
        #expect(again.status != 0 && again.stderr.contains("has no client"))
    }
}
