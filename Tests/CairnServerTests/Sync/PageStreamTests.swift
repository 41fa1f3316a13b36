import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// `pages=N`: one answer carries up to N changes pages, one per line, each exactly what following the cursors one
/// request at a time gives.
@Suite("Several changes pages in one answer")
struct PageStreamTests {
    static let path = "/v1/projects/\(Fixture.project)/collections/notes/changes"

    func create(_ index: Int) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: "notes", id: String(format: "n%03d", index), op: .create, data: ["count": .integer(Int64(index))])
    }

    /// The pages of a streamed answer, one per line.
    static func pages(_ reply: HTTPReply) throws -> [ChangesPage] {
        try #require(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(reply.header("Content-Type") == PageStream.mediaType)
        var body = reply.body
        if reply.header("Content-Encoding") == "gzip" { body = try Gzip.decompress(body, limit: 1 << 26) }
        #expect(body.last == UInt8(ascii: "\n"), "every page ends its line")
        return try body.split(separator: UInt8(ascii: "\n")).map { try CairnJSON.decode(ChangesPage.self, from: Data($0)) }
    }

    func stream(_ fixture: Fixture, _ query: String, headers: [String: String] = [:]) async throws -> HTTPReply {
        try await fixture.http.send(.GET, Self.path + "?" + query, token: fixture.tokens["alice"], headers: headers)
    }

    @Test("a snapshot and a changes feed in answers of several pages: the same pages, cursors and total as one request at a time")
    func samePages() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", (0..<230).map(create))
            // One page at a time, as clients have always pulled.
            var single: [ChangesPage] = []
            var cursor: String?
            repeat {
                single.append(try await fixture.pull("alice", "notes", since: cursor, limit: 50).decode(ChangesPage.self))
                cursor = single.last?.cursor
            } while single.last?.hasMore == true
            #expect(single.count == 5)

            // Three pages in the first answer, the rest in the second: it stops at the feed's end, not at 10.
            let first = try Self.pages(try await stream(fixture, "limit=50&pages=3"))
            #expect(first.count == 3)
            #expect(first.last?.hasMore == true)
            #expect(first.first?.total == 230 && first.dropFirst().allSatisfy { $0.total == nil })
            let rest = try Self.pages(try await stream(fixture, "limit=50&pages=10&since=\(Fixture.encode(try #require(first.last?.cursor)))"))
            #expect(rest.count == 2)
            #expect(rest.last?.hasMore == false)
            let streamed = first + rest
            #expect(streamed.map { $0.changes.map(\.id) } == single.map { $0.changes.map(\.id) })
            #expect(streamed.map(\.hasMore) == single.map(\.hasMore))

            // Changes after a cursor, with a filter: as one request at a time gives them, gone included.
            let head = try #require(streamed.last?.cursor)
            _ = try await fixture.push("alice", (230..<260).map(create))
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n001", op: .patch, data: ["count": 999])])
            let filter = Filter.condition("count", .lt, 500)
            let expected = try await fixture.pullAll("alice", "notes", since: head, limit: 7, filter: filter).changes
            let text = String(decoding: try CairnJSON.encode(filter), as: UTF8.self)
            let filtered = try Self.pages(try await stream(fixture, "limit=7&pages=100&since=\(Fixture.encode(head))&where=\(Fixture.encode(text))"))
            #expect(filtered.count == 5)
            #expect(filtered.flatMap(\.changes).map(\.id) == expected.map(\.id))
            #expect(filtered.flatMap(\.changes).first { $0.id == "n001" }?.gone == true)
        }
    }

    @Test("with gzip each page is flushed as written: the answer is one gzip stream of the same lines")
    func compressed() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", (0..<120).map(create))
            let plain = try Self.pages(try await stream(fixture, "limit=40&pages=5"))
            let reply = try await stream(fixture, "limit=40&pages=5", headers: ["Accept-Encoding": "gzip"])
            #expect(reply.header("Content-Encoding") == "gzip")
            let packed = try Self.pages(reply)
            #expect(packed.map { $0.changes.map(\.id) } == plain.map { $0.changes.map(\.id) })
            #expect(packed.count == 3)
        }
    }

    @Test("a bad pages value is 422 naming pages; a bad cursor answers its status before any page", arguments: ["0", "1001", "x", "-1"])
    func refused(_ pages: String) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await stream(fixture, "pages=\(pages)")
            #expect(reply.status == 422)
            #expect(reply.errorCode == "validation_failed")
            #expect(reply.json?["error"]?["details"]?["field"]?.stringValue == "pages")
            let badCursor = try await stream(fixture, "pages=5&since=nonsense")
            #expect(badCursor.status == 422)
            #expect(badCursor.header("Content-Type")?.hasPrefix("application/json") == true)
        }
    }
}
