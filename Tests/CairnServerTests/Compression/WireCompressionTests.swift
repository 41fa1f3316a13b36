import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// gzip on the wire (PROTOCOL.md, Compression): compressed answers for clients that ask, plain JSON for the others,
/// compressed request bodies read within the body limit, and nothing compressed when the server is told not to.
@Suite("Wire compression")
struct WireCompressionTests {
    static let path = "/v1/projects/\(Fixture.project)/collections/notes/changes"

    /// Creates `count` notes through the fixture's writer.
    static func seed(_ fixture: Fixture, count: Int) async throws {
        let operations = (0..<count).map { index in
            SyncOperation(opId: newOpID(), collection: "notes", id: "n-\(index)", op: .create,
                          data: ["title": .string("A note about site \(index) and its inspection")])
        }
        _ = try await fixture.push("alice", operations)
    }

    @Test("a page asked for with Accept-Encoding: gzip comes compressed and holds the same bytes as the plain one")
    func compressedPage() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture, count: 200)
            let plain = try await fixture.http.send(.GET, Self.path, token: fixture.tokens["alice"])
            let packed = try await fixture.http.send(.GET, Self.path, token: fixture.tokens["alice"], headers: ["Accept-Encoding": "gzip, deflate"])
            #expect(plain.status == 200 && packed.status == 200)
            #expect(plain.header("Content-Encoding") == nil)
            #expect(plain.header("Content-Length") == String(plain.body.count))
            #expect(packed.header("Content-Encoding") == "gzip")
            #expect(packed.header("Vary")?.contains("Accept-Encoding") == true)
            #expect(Gzip.isCompressed(packed.body))
            #expect(packed.body.count * 4 < plain.body.count)
            // The cursor is the same opaque text in both; the rest of the page byte for byte.
            #expect(try Gzip.decompress(packed.body, limit: 1 << 24) == plain.body)
            // Both say the server reads compressed bodies.
            #expect(plain.header("Accept-Encoding") == "gzip" && packed.header("Accept-Encoding") == "gzip")
        }
    }

    @Test("an answer to gzip;q=0 and a small answer stay plain")
    func plainWhereCompressionDoesNotPay() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let refused = try await fixture.http.send(.GET, Self.path, token: fixture.tokens["alice"], headers: ["Accept-Encoding": "gzip;q=0, identity"])
            #expect(refused.header("Content-Encoding") == nil)
            let small = try await fixture.http.send(.GET, "/health", headers: ["Accept-Encoding": "gzip"])
            #expect(small.status == 200 && small.header("Content-Encoding") == nil && small.json?["status"] == "ok")
        }
    }

    @Test("a compressed batch is applied like a plain one")
    func compressedBatch() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let batch: JSONValue = ["operations": [["opId": .string(newOpID()), "collection": "notes", "id": "zipped", "op": "create",
                                                    "data": ["title": .string(String(repeating: "compressed ", count: 200))]]]]
            let reply = try await fixture.http.send(
                .POST, "/v1/projects/\(Fixture.project)/batch", token: fixture.tokens["alice"],
                body: try Gzip.compress(Data(batch.jsonText().utf8)), headers: ["Content-Encoding": "gzip"])
            #expect(reply.status == 200)
            #expect(reply.json?["results"]?.arrayValue?.first?["status"] == "applied")
            let page = try await fixture.pullAll("bob", "notes")
            #expect(page.changes.map(\.id) == ["zipped"])
        }
    }

    @Test("a compression bomb is refused with 413 and the server keeps serving")
    func bomb() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            // 200 MB of spaces inside a batch: about 200 KB compressed, twenty times the 10 MB body limit once expanded.
            var text = Data("{\"operations\":[".utf8)
            text.append(Data(repeating: 0x20, count: 200 << 20))
            text.append(Data("]}".utf8))
            let bomb = try Gzip.compress(text)
            text = Data()
            #expect(bomb.count < 1 << 20)
            let reply = try await fixture.http.send(
                .POST, "/v1/projects/\(Fixture.project)/batch", token: fixture.tokens["alice"], body: bomb, headers: ["Content-Encoding": "gzip"])
            #expect(reply.status == 413)
            #expect(reply.errorCode == "payload_too_large")
            let health = try await fixture.http.send(.GET, "/health")
            #expect(health.status == 200)
            // A route with a smaller limit applies it to the expanded body: a 2 MB sign-in is too large, compressed or not.
            let login = try await fixture.http.send(
                .POST, "/v1/auth/login", body: try Gzip.compress(Data(repeating: 0x20, count: 2 << 20)), headers: ["Content-Encoding": "gzip"])
            #expect(login.status == 413)
        }
    }

    @Test("a body that is not gzip, another coding, or a compressed file upload is refused, not misread")
    func refusedCodings() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let batchPath = "/v1/projects/\(Fixture.project)/batch"
            let broken = try await fixture.http.send(
                .POST, batchPath, token: fixture.tokens["alice"], body: Data("{\"operations\":[]}".utf8), headers: ["Content-Encoding": "gzip"])
            #expect(broken.status == 400 && broken.errorCode == "bad_request")
            let brotli = try await fixture.http.send(
                .POST, batchPath, token: fixture.tokens["alice"], body: Data("{}".utf8), headers: ["Content-Encoding": "br"])
            #expect(brotli.status == 415 && brotli.errorCode == "unsupported_media_type")
            #expect(brotli.header("Accept-Encoding") == "gzip")
            let upload = try await fixture.http.send(
                .PUT, "/v1/projects/\(Fixture.project)/files/f-unknown/upload", token: fixture.tokens["alice"], body: try Gzip.compress(Data("bytes".utf8)),
                headers: ["Content-Encoding": "gzip", "Content-Type": "application/octet-stream"])
            #expect(upload.status == 415)
        }
    }

    @Test("with compression off, answers are plain and compressed bodies are refused with 415")
    func off() async throws {
        let fixture = try await Fixture.start { $0.wireCompression = false }
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture, count: 50)
            let page = try await fixture.http.send(.GET, Self.path, token: fixture.tokens["alice"], headers: ["Accept-Encoding": "gzip"])
            #expect(page.status == 200 && page.header("Content-Encoding") == nil && page.header("Accept-Encoding") == nil)
            let batch = try await fixture.http.send(
                .POST, "/v1/projects/\(Fixture.project)/batch", token: fixture.tokens["alice"],
                body: try Gzip.compress(Data("{\"operations\":[]}".utf8)), headers: ["Content-Encoding": "gzip"])
            #expect(batch.status == 415 && batch.errorCode == "unsupported_media_type")
            #expect(batch.header("Accept-Encoding") == "identity")
        }
    }
}

/// The codec on its own: sizes read from the stream's trailer, and limits that hold when the trailer lies.
@Suite("Gzip")
struct GzipTests {
    @Test("a stream expands to its bytes; past the limit it stops with tooLarge; garbage is corrupt")
    func roundTrip() throws {
        let text = Data((0..<50_000).map { "line \($0) of a page\n" }.joined().utf8)
        let packed = try Gzip.compress(text)
        #expect(Gzip.isCompressed(packed) && !Gzip.isCompressed(text))
        // Uploads' fastest level is the same format.
        #expect(try Gzip.decompress(Gzip.compress(text, effort: .fast), limit: text.count) == text)
        #expect(try Gzip.decompress(packed, limit: text.count) == text)
        #expect(throws: GzipError.tooLarge(limit: text.count - 1)) { try Gzip.decompress(packed, limit: text.count - 1) }
        #expect(throws: GzipError.corrupt) { try Gzip.decompress(Data("not gzip at all, but long enough".utf8), limit: 1 << 20) }
    }

    @Test("a trailer that claims a smaller size than the stream holds neither truncates it nor passes the limit")
    func lyingTrailer() throws {
        let text = Data(repeating: 0x61, count: 100_000)
        var packed = try Gzip.compress(text)
        // ISIZE says 10 bytes: the fast path runs out of room and the stream is read again, bounded by the limit.
        packed.replaceSubrange((packed.count - 4)..<packed.count, with: [10, 0, 0, 0])
        #expect(throws: GzipError.tooLarge(limit: 50_000)) { try Gzip.decompress(packed, limit: 50_000) }
        let read = try? Gzip.decompress(packed, limit: 200_000)
        #expect(read == nil || read == text)
    }
}
