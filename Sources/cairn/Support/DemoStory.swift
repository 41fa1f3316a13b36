import CairnProtocol
import CairnServer
import CairnTestSupport
import Foundation

/// The narrated demo: a server and two workers whose offline edits meet, conflict and converge.
final class DemoStory: @unchecked Sendable {
    private var server: TestServer?
    private var step = 0

    func say(_ text: String) {
        step += 1
        print("\(step). \(text)")
    }

    func stop() async { await server?.stop() }

    func run() async throws {
        let server = try await TestServer.start()
        self.server = server
        say("Started a Cairn server at \(server.baseURL) with a temporary data directory.")
        let schema = Schema(collections: [
            CollectionSchema(
                name: "inspections",
                fields: [FieldSchema(name: "site", type: .string), FieldSchema(name: "status", type: .string),
                         FieldSchema(name: "score", type: .integer), FieldSchema(name: "notes", type: .string)],
                indexes: [["status"]], conflictPolicy: .mergeFields)
        ])
        try await server.setUp(project: "field", schema: schema, users: ["alice": .writer, "bob": .writer])
        say("Created project \"field\" with a merge-fields collection \"inspections\", and users alice and bob.")

        let http = TestHTTPClient(baseURL: server.baseURL)
        let alice = try await http.login("alice").accessToken
        let bob = try await http.login("bob").accessToken
        func push(_ token: String, _ operations: [SyncOperation]) async throws -> [OperationResult] {
            let reply = try await http.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: operations))
            guard reply.status == 200 else { throw try reply.decode(ErrorEnvelope.self).error }
            return try reply.decode(BatchResponse.self).results
        }

        let created = try await push(alice, (1...3).map {
            SyncOperation(opId: "alice-create-\($0)", collection: "inspections", id: "site-\($0)", op: .create,
                          data: ["site": .string("Site \($0)"), "status": "open", "score": 0])
        })
        say("alice pushed 3 inspections made offline: \(created.map { "\($0.status.rawValue) v\($0.record?.version ?? 0)" }.joined(separator: ", ")).")
        let replay = try await push(alice, [SyncOperation(opId: "alice-create-1", collection: "inspections", id: "site-1", op: .create,
                                                          data: ["site": "Site 1", "status": "open", "score": 0])])
        say("alice's retry of a lost response replays the original result (\(replay[0].status.rawValue) v\(replay[0].record?.version ?? 0)); nothing is applied twice.")

        let aliceEdit = try await push(alice, [SyncOperation(opId: "alice-edit", collection: "inspections", id: "site-1", op: .patch, baseVersion: 1, data: ["status": "passed"])])
        let bobEdit = try await push(bob, [SyncOperation(opId: "bob-edit", collection: "inspections", id: "site-1", op: .patch, baseVersion: 1, data: ["score": 87])])
        say("alice set site-1 status and bob its score, both from version 1: \(aliceEdit[0].status.rawValue), \(bobEdit[0].status.rawValue) (different fields merge).")
        let clash = try await push(bob, [SyncOperation(opId: "bob-clash", collection: "inspections", id: "site-1", op: .patch, baseVersion: 1, data: ["status": "failed"])])
        guard clash[0].status == .conflict, let current = clash[0].current else { throw CLIError("expected a conflict") }
        say("bob also changed status from version 1: conflict, the server holds \(current.data["status"]?.stringValue ?? "?") at v\(current.version).")
        let resolved = try await push(bob, [SyncOperation(opId: "bob-resolve", collection: "inspections", id: "site-1", op: .patch, baseVersion: current.version, data: ["notes": "bob agrees: passed"])])
        say("bob resolved it by keeping the server's status and adding a note: \(resolved[0].status.rawValue) v\(resolved[0].record?.version ?? 0).")

        var replicas: [String: [String: Change]] = [:]
        for (user, token) in [("alice", alice), ("bob", bob)] {
            var cursor: String?
            var replica: [String: Change] = [:]
            repeat {
                let path = "/v1/projects/field/collections/inspections/changes?limit=2" + (cursor.map { "&since=\($0)" } ?? "")
                let page = try await http.send(.GET, path, token: token).decode(ChangesPage.self)
                for change in page.changes { replica[change.id] = change.deleted ? nil : change }
                cursor = page.hasMore ? page.cursor : nil
            } while cursor != nil
            replicas[user] = replica
        }
        say("alice and bob pulled the changes feed in pages of 2.")

        let digest = try await http.send(.GET, "/v1/projects/field/collections/inspections/digest", token: alice).decode(DigestResponse.self)
        var converged = true
        for (user, replica) in replicas.sorted(by: { $0.key < $1.key }) {
            let local = CollectionDigest(pairs: replica.values.map { ($0.id, $0.version) })
            let same = local.value == digest.digest && local.count == digest.count
            converged = converged && same
            say("\(user)'s replica: \(local.count) records, digest \(local.value.prefix(12)) \(same ? "matches" : "DIFFERS FROM") the server's.")
        }
        let site1 = replicas["alice"]?["site-1"]?.data ?? [:]
        say("site-1 everywhere: \(JSONValue.object(site1).jsonText())")
        guard converged else { throw CLIError("the replicas did not converge") }
        print("✔ all replicas converged.")
    }
}
