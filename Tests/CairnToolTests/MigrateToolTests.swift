import CairnProtocol
import CairnTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `cairn admin migrate`: a server moves from its data directory to PostgreSQL and its clients go on.
@Suite("Moving a server from SQLite to PostgreSQL", .serialized)
struct MigrateToolTests {
    @Test("every record, version, tombstone, token and file moves; a cursor from before pulls only what changed after")
    func migrate() async throws {
        guard PostgresCluster.isAvailable(for: "the migration test") else { return }
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = data.appendingPathComponent("server").path
        try await Tool.setUpField(["--data", server])

        // Before: writes, deletes and a file of 2.5 MB (three PostgreSQL chunks) on the SQLite server.
        let sqlite = try Tool.start(["serve", "--data", server, "--port", "0", "--log-level", "error"],
                                    environment: ProcessInfo.processInfo.environment, output: .pipe)
        let before = TestHTTPClient(baseURL: try await Instances.listeningURL(sqlite))
        let token = try await before.login("alice").accessToken
        let writes = (0..<60).map { SyncOperation(opId: newOpID(), collection: "notes", id: "n\($0)", op: .create, data: ["count": .integer(Int64($0))]) }
        #expect(try await before.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: writes)).status == 200)
        let deletes = (0..<5).map { SyncOperation(opId: newOpID(), collection: "notes", id: "n\($0)", op: .delete) }
        #expect(try await before.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: deletes)).status == 200)
        let bytes = TestFiles.bytes(2_500_000, seed: 3)
        let created = try await before.send(.POST, "/v1/projects/field/files", token: token, value: NewFileRequest(
            name: "scan.pdf", contentType: "application/pdf", size: Int64(bytes.count), sha256: TestFiles.sha256(bytes)))
        let file = try created.decode(FileMetadata.self)
        #expect(try await before.send(.PUT, "/v1/projects/field/files/\(file.id)/upload", token: token, body: bytes).status == 200)
        #expect(try await before.send(.POST, "/v1/projects/field/files/\(file.id)/complete", token: token).status == 200)
        var cursor: String?
        var seen = 0
        while true {
            let page = try await Self.pull(before, token: token, since: cursor)
            seen += page.changes.count
            cursor = page.cursor
            if !page.hasMore { break }
        }
        #expect(seen == 55)
        sqlite.send(SIGTERM)
        #expect(await sqlite.exit() == 0)

        // A run, then the state an interrupted one leaves (rows missing, a file cut off in its second chunk), then a
        // run that completes it, then one that finds nothing left to do.
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        let first = try await Tool.run(["admin", "migrate", "--from-data", server, "--to-postgres", url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("records: 60 rows"), "\(first.stdout)")
        #expect(first.stdout.contains("1 files (2500000 bytes)"), "\(first.stdout)")
        _ = try cluster.psql("""
            DELETE FROM records WHERE id IN ('n7', 'n8', 'n9');
            DELETE FROM file_chunks WHERE chunk = 2;
            UPDATE file_chunks SET bytes = substring(bytes FROM 1 FOR 1000) WHERE chunk = 1;
            """, database: url)
        #expect(try cluster.psql("SELECT sum(octet_length(bytes)) FROM file_chunks", database: url) == "1049576")
        let resumed = try await Tool.run(["admin", "migrate", "--from-data", server, "--to-postgres", url])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("1 files (1450424 bytes)"), "the copy resumes after the bytes kept: \(resumed.stdout)")
        let again = try await Tool.run(["admin", "migrate", "--from-data", server, "--to-postgres", url])
        #expect(again.status == 0)
        #expect(again.stdout.contains("0 files (0 bytes)"), "\(again.stdout)")
        #expect(try cluster.psql("SELECT count(*) FROM records", database: url) == "60")

        // After: the same token, the same cursor, the same bytes.
        let postgres = try Tool.start(["serve", "--postgres", url, "--port", "0", "--log-level", "error"],
                                      environment: ProcessInfo.processInfo.environment, output: .pipe)
        defer {
            postgres.send(SIGTERM)
            postgres.waitUntilExit()
        }
        let after = TestHTTPClient(baseURL: try await Instances.listeningURL(postgres))
        let unchanged = try await Self.pull(after, token: token, since: cursor)
        #expect(unchanged.changes.isEmpty)
        let next = [SyncOperation(opId: newOpID(), collection: "notes", id: "after", op: .create, data: ["count": 1])]
        let pushed = try await after.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: next))
        #expect(try pushed.decode(BatchResponse.self).results.first?.record?.version == 66, "versions go on from the SQLite head")
        let changed = try await Self.pull(after, token: token, since: cursor)
        #expect(changed.changes.map(\.id) == ["after"])
        let download = try await after.send(.GET, "/v1/projects/field/files/\(file.id)/content", token: token)
        #expect(download.status == 200)
        #expect(download.body == bytes)
        let snapshot = try await Self.pull(after, token: token, since: nil, limit: 1000)
        #expect(snapshot.changes.count == 56)
    }

    static func pull(_ client: TestHTTPClient, token: String, since: String?, limit: Int = 20) async throws -> ChangesPage {
        var path = "/v1/projects/field/collections/notes/changes?limit=\(limit)"
        if let since { path += "&since=" + (since.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? since) }
        let reply = try await client.send(.GET, path, token: token)
        guard reply.status == 200 else { throw CocoaError(.coderInvalidValue, userInfo: [NSDebugDescriptionErrorKey: "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))"]) }
        return try reply.decode(ChangesPage.self)
    }
}
