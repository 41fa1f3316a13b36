import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Storage runs with the server: open while it serves, closed once it stops.
@Suite("Server and storage lifecycle")
struct LifecycleTests {
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("cairn-lifecycle-\(UUID().uuidString)")
    }

    @Test("a started server closes its storage when it stops")
    func startedServer() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ServerConfiguration(dataDirectory: directory)
        configuration.port = 0
        configuration.purgeInterval = 0
        let server = try SyncServer(configuration: configuration)
        // Usable before it runs, as the admin tool uses it.
        try await server.admin.addProject("field")
        let running = try await server.start()
        #expect(try await server.storage.schema(project: "field") != nil)
        await running.stop()
        await #expect(throws: (any Error).self) { try await server.storage.schema(project: "field") }
    }

    @Test("an embedded server keeps its storage across listener restarts, and closes it at stop")
    func embeddedServer() async throws {
        let embedded = try await EmbeddedServer.start()
        try await embedded.setUp(project: "field", schema: Fixture.schema)
        await embedded.stopListening()
        #expect(try await embedded.server.storage.schema(project: "field") != nil)
        try await embedded.startListening()
        #expect(try await embedded.server.storage.schema(project: "field") != nil)
        await embedded.stop()
        await #expect(throws: (any Error).self) { try await embedded.server.storage.schema(project: "field") }
    }
}
