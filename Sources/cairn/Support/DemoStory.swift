import Cairn
import CairnProtocol
import CairnServer
import Foundation

/// The narrated demo: a server and two field workers whose offline edits meet, conflict, resolve and converge.
/// The network cut is real: the server's listener closes, and the clients' connections are refused.
final class DemoStory: @unchecked Sendable {
    private var server: EmbeddedServer?
    private var directory: URL?
    private var step = 0
    /// A fresh password per run, for the demo's users.
    private let password = (0..<4).map { _ in UUID().uuidString.prefix(8) }.joined(separator: "-")

    func say(_ text: String) {
        step += 1
        print("\(step). \(text)")
    }

    func stop() async {
        await server?.stop()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    static let schema = Schema(collections: [
        CollectionSchema(
            name: "inspections",
            fields: [FieldSchema(name: "site", type: .string), FieldSchema(name: "status", type: .string),
                     FieldSchema(name: "score", type: .integer), FieldSchema(name: "notes", type: .string),
                     FieldSchema(name: "due", type: .datetime), FieldSchema(name: "photo", type: .file)],
            indexes: [["status"]], conflictPolicy: .mergeFields),
        CollectionSchema(name: "sites", fields: [FieldSchema(name: "name", type: .string), FieldSchema(name: "open", type: .boolean)]),
    ])

    func run() async throws {
        let server = try await EmbeddedServer.start()
        self.server = server
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        say("Started a Cairn server at \(server.baseURL) with a temporary data directory.")
        try await server.setUp(project: "field", schema: Self.schema)
        for user in ["alice", "bob"] { try await server.addUser(user, password: password, role: .writer, project: "field") }
        say("Created project \"field\": \"inspections\" (merge-fields) and \"sites\" (reject), and users alice and bob.")

        func open(_ user: String) async throws -> CairnClient {
            var configuration = CairnConfiguration(
                serverURL: server.baseURL, project: "field", device: "\(user)-tablet",
                credentials: .password(user: user, password: password),
                store: .file(directory.appendingPathComponent("\(user).sqlite").path))
            configuration.conflictResolver = .merge(fallback: .server)
            return try await CairnClient.open(configuration)
        }
        let alice = try await open("alice")
        let bob = try await open("bob")
        say("alice and bob opened local stores; each learned the schema and made a table per collection.")

        try alice.writeBatch { batch in
            try batch.save("sites", id: "site-1", data: ["name": "North depot", "open": true])
            try batch.save("inspections", id: "insp-1", data: ["site": "site-1", "status": "open", "score": 0, "due": "2026-12-01T09:00:00Z"])
        }
        try await alice.sync()
        try await bob.sync()
        say("alice created site-1 and inspection insp-1 and synced; bob pulled them.")

        await server.stopListening()
        say("The network goes down: the server's port \(server.port) is closed, and every connection is refused.")
        try alice.patch("inspections", id: "insp-1", ["status": "passed"])
        try alice.create("inspections", id: "insp-2", data: ["site": "site-1", "status": "open", "score": 0])
        try bob.patch("inspections", id: "insp-1", ["score": 87, "notes": "exits clear"])
        try bob.patch("inspections", id: "insp-1", ["status": "failed"])
        try bob.create("inspections", id: "insp-3", data: ["site": "site-1", "status": "open", "score": 0])
        try bob.patch("sites", id: "site-1", ["open": false])
        let photo = directory.appendingPathComponent("exits.jpg")
        try Data((0..<48_000).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: photo)
        let photoID = try alice.files.upload(
            from: photo, name: "insp-2-exits.jpg", contentType: "image/jpeg",
            attachTo: FileAttachment(collection: "inspections", id: "insp-2", field: "photo"))
        let bobQueue = try bob.pendingOperations().map { "\($0.kind.rawValue) \($0.recordID)" }
        say("Offline, alice passed insp-1 and added insp-2; bob scored insp-1, failed it, added insp-3 and closed site-1.")
        let shown = try alice.record("inspections", id: "insp-2")?.data["photo"]?.stringValue ?? "-"
        say("Offline, alice photographed insp-2's exits (48 KB): the upload is queued, and insp-2's photo field shows "
            + "the local id \(shown == photoID ? "local-…" : shown), so her app can display it now.")
        say("bob's two edits of insp-1 combined into one queued patch: \(bobQueue.joined(separator: ", ")).")
        let attempt = ContinuousClock.now
        do {
            try await alice.sync()
            throw CLIError("alice synced although the server was not listening")
        } catch let error as CairnError {
            let waited = ContinuousClock.now - attempt
            let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
            say("alice tried to sync offline: \(error.code) after \(String(format: "%.1f", seconds)) s "
                + "(retries included), and her \(try alice.pendingOperations().count) changes stay queued.")
        }

        try await server.startListening()
        say("The network is back: the server listens on port \(server.port) again.")
        let aliceSummary = try await alice.sync()
        say("Back online, alice synced: pushed \(aliceSummary.pushed), pulled \(aliceSummary.pulled).")
        await alice.files.waitForUploads()
        guard let upload = try alice.files.upload(photoID), upload.state == .completed, let fileID = upload.serverID else {
            throw CLIError("alice's photo did not upload")
        }
        say("Once insp-2 was on the server, alice's photo uploaded in three steps (create, bytes, complete); the server "
            + "checked its SHA-256 and set insp-2's photo to file \(fileID.prefix(8))… as an ordinary change.")
        let bobSummary = try await bob.sync()
        say("bob synced: pushed \(bobSummary.pushed), conflicts \(bobSummary.conflicts) (both changed insp-1's status).")
        if let conflict = try bob.conflicts().first {
            say("bob's conflict on \(conflict.conflict.id): base \(conflict.conflict.base?["status"]?.stringValue ?? "-"), "
                + "his \(conflict.conflict.local?["status"]?.stringValue ?? "-"), server \(conflict.conflict.server?["status"]?.stringValue ?? "-") "
                + "-> \(conflict.resolution): fields changed on one side merged, the status kept the server's.")
        }
        try await alice.sync()
        say("alice synced again and received bob's merged changes.")

        var converged = true
        for (name, client) in [("alice", alice), ("bob", bob)] {
            for collection in ["inspections", "sites"] {
                let verification = try await client.verify(collection)
                converged = converged && verification.matches
                say("\(name)'s \(collection): \(verification.localCount) records, digest \(verification.localDigest.prefix(12)) "
                    + (verification.matches ? "matches the server." : "DIFFERS from the server's \(verification.serverDigest.prefix(12))."))
            }
        }
        guard let bobPhoto = try bob.record("inspections", id: "insp-2")?.data["photo"]?.stringValue else {
            throw CLIError("bob does not see insp-2's photo")
        }
        let bytes = try await bob.files.data(for: bobPhoto)
        let same = bytes == (try Data(contentsOf: photo))
        say("bob's insp-2 shows photo \(bobPhoto.prefix(8))…: he downloaded \(bytes.count / 1000) KB, "
            + (same ? "the very bytes alice took." : "BUT THEY DIFFER from alice's."))
        converged = converged && same
        let insp1 = try alice.record("inspections", id: "insp-1")?.data ?? [:]
        say("insp-1 everywhere: \(JSONValue.object(insp1).jsonText())")
        print(alice.queryJSON("SELECT id, status, score FROM inspections ORDER BY id"))
        guard converged, try alice.records(Query("inspections")) == bob.records(Query("inspections")) else {
            throw CLIError("the replicas did not converge")
        }
        print("✔ all replicas converged.")
    }
}
