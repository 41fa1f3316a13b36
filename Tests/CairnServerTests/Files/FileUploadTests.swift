import AsyncHTTPClient
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import NIOCore
import Testing

@Suite("Files: the three upload steps", .timeLimit(.minutes(20)))
struct FileUploadTests {
    @Test("create, upload whole, complete: the file is completed with its SHA-256 and downloads byte for byte")
    func wholeUpload() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bytes = testBytes(300_000)
            let created = try await fixture.newFile(size: bytes.count, tags: ["site-7"])
            #expect(created.status == .new)
            #expect(created.uploadOffset == 0)
            #expect(created.uploadUrl == "/v1/projects/field/files/\(created.id)/upload")
            #expect(created.expiresAt != nil)
            #expect(created.createdBy == "alice")
            let put = try await fixture.put(created, bytes)
            #expect(put.status == 200)
            #expect(put.header("Upload-Offset") == "300000")
            let done = try await fixture.complete(created)
            #expect(done.status == 200)
            let file = try done.decode(FileMetadata.self)
            #expect(file.status == .completed)
            #expect(file.sha256 == sha256(bytes))
            #expect(file.expiresAt == nil)
            let download = try await fixture.http.send(.GET, "\(Fixture.files)/\(file.id)/content", token: fixture.tokens["rita"])
            #expect(download.status == 200)
            #expect(download.body == bytes)
            #expect(download.header("ETag") == "\"\(sha256(bytes))\"")
            #expect(download.header("Content-Type") == "image/jpeg")
            // Completing again answers the same file.
            let again = try await fixture.complete(created)
            #expect(try again.decode(FileMetadata.self).status == .completed)
            // Its bytes can no longer change.
            #expect(try await fixture.put(created, bytes).errorCode == "file_not_new")
        }
    }

    @Test("chunks with Content-Range resume from HEAD's Upload-Offset; a chunk at the wrong offset is refused with the offset")
    func chunkedUpload() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bytes = testBytes(250_000)
            let file = try await fixture.newFile(size: bytes.count, sha256: sha256(bytes))
            let first = try await fixture.put(file, bytes[0..<100_000], range: "bytes 0-99999/250000")
            #expect(first.status == 200)
            #expect(try await fixture.offset(file) == 100_000)
            let wrong = try await fixture.put(file, bytes[50_000..<100_000], range: "bytes 50000-99999/250000")
            #expect(wrong.status == 409)
            #expect(wrong.errorCode == "offset_mismatch")
            #expect(wrong.header("Upload-Offset") == "100000")
            let badTotal = try await fixture.put(file, bytes[100_000..<100_010], range: "bytes 100000-100009/999")
            #expect(badTotal.errorCode == "validation_failed")
            let malformed = try await fixture.put(file, Data(), range: "bytes=0-1")
            #expect(malformed.status == 422)
            let ask = try await fixture.put(file, Data(), range: "bytes */250000")
            #expect(ask.status == 200)
            #expect(ask.header("Upload-Offset") == "100000")
            let early = try await fixture.complete(file)
            #expect(early.status == 409)
            #expect(early.errorCode == "upload_incomplete")
            let rest = try await fixture.put(file, bytes[100_000...], range: "bytes 100000-249999/250000")
            #expect(rest.header("Upload-Offset") == "250000")
            #expect(try await fixture.complete(file).status == 200)
            let download = try await fixture.http.send(.GET, "\(Fixture.files)/\(file.id)/content", token: fixture.tokens["alice"])
            #expect(download.body == bytes)
        }
    }

    @Test("bytes past the declared size are refused with 413 and the bytes before them are kept")
    func tooManyBytes() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let file = try await fixture.newFile(size: 10)
            let reply = try await fixture.put(file, testBytes(11))
            #expect(reply.status == 413)
            #expect(reply.errorCode == "payload_too_large")
            let chunk = try await fixture.put(file, testBytes(6), range: "bytes 0-4/10")
            #expect(chunk.status == 413)
        }
    }

    @Test("a wrong SHA-256 or a missing byte at complete is refused, and the file stays new")
    func verification() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bytes = testBytes(5000)
            let file = try await fixture.newFile(size: bytes.count, sha256: sha256(testBytes(5000, seed: 9)))
            _ = try await fixture.put(file, bytes)
            let refused = try await fixture.complete(file)
            #expect(refused.status == 422)
            #expect(refused.errorCode == "checksum_mismatch")
            let after = try await fixture.metadata(file.id)
            #expect(after.status == .new)
            #expect(after.uploadOffset == 0)

            let short = try await fixture.newFile(size: 100)
            _ = try await fixture.put(short, testBytes(60), range: "bytes 0-59/100")
            let incomplete = try await fixture.complete(short)
            #expect(incomplete.status == 409)
            #expect(incomplete.errorCode == "upload_incomplete")
            #expect(try await fixture.metadata(short.id).status == .new)
        }
    }

    @Test("a body cut off mid-way keeps the bytes that arrived; the upload resumes from the offset")
    func interruptedBody() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bytes = testBytes(4 << 20)
            let file = try await fixture.newFile(size: bytes.count, sha256: sha256(bytes))
            // A client that sends 3 MB of a 4 MB body, then fails.
            var request = HTTPClientRequest(url: fixture.server.baseURL.absoluteString + file.uploadUrl)
            request.method = .PUT
            request.headers.add(name: "Authorization", value: "Bearer \(fixture.tokens["alice"]!)")
            let sent = bytes[0..<(3 << 20)]
            request.body = .stream(BrokenBody(chunks: stride(from: 0, to: sent.count, by: 256 << 10).map {
                ByteBuffer(bytes: sent[$0..<min($0 + (256 << 10), sent.count)])
            }), length: .known(Int64(bytes.count)))
            await #expect(throws: (any Error).self) { _ = try await HTTPClient.shared.execute(request, timeout: .seconds(30)) }
            // The server keeps what arrived. It may take a moment to notice the broken body: until it does, the
            // offset grows and a new PUT is refused with offset_mismatch ("ask for the offset and retry"), which is
            // what a client does here. No wall-clock limit: the suite's time limit ends a server that never notices.
            var rest: HTTPReply
            var offset: Int64
            repeat {
                offset = try await fixture.offset(file) ?? 0
                rest = try await fixture.put(file, bytes[Int(offset)...], range: "bytes \(offset)-\(bytes.count - 1)/\(bytes.count)")
                if rest.status == 409 {
                    #expect(rest.errorCode == "offset_mismatch")
                    try await Task.sleep(for: .milliseconds(20))
                }
            } while rest.status == 409 && rest.errorCode == "offset_mismatch"
            #expect(rest.status == 200)
            #expect(offset == Int64(sent.count))
            let done = try await fixture.complete(file)
            #expect(try done.decode(FileMetadata.self).sha256 == sha256(bytes))
        }
    }

    @Test("complete sets the attached record field at a new version, in the feed; a missing record leaves the file new")
    func attachTo() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let target = FileAttachment(collection: "notes", id: "n1", field: "photo")
            let bytes = testBytes(1000)
            // No record yet: nothing may point at the file, which stays new.
            let early = try await fixture.newFile(size: bytes.count, attachTo: target)
            _ = try await fixture.put(early, bytes)
            let missing = try await fixture.complete(early)
            #expect(missing.status == 404)
            #expect(try await fixture.metadata(early.id).status == .new)

            let created = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "a"])])
            let recordVersion = try #require(created[0].record?.version)
            let done = try await fixture.complete(early)
            let file = try done.decode(FileMetadata.self)
            #expect(file.status == .completed)
            let attached = try #require(file.attachedVersion)
            #expect(attached > recordVersion)
            let page = try await fixture.pullAll("bob", "notes")
            let record = try #require(page.changes.first { $0.id == "n1" })
            #expect(record.version == attached)
            #expect(record.data?["photo"] == .string(file.id))
            #expect(record.data?["title"] == "a")
            #expect(record.updatedBy == "alice")
        }
    }

    @Test("attachTo must name a file field of a collection in the schema")
    func attachToChecked() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for (target, field) in [
                (["collection": "nope", "id": "n1", "field": "photo"], "attachTo.collection"),
                (["collection": "notes", "id": "n1", "field": "title"], "attachTo.field"),
                (["collection": "notes", "id": "bad id", "field": "photo"], "attachTo.id"),
            ] as [([String: JSONValue], String)] {
                let reply = try await fixture.createFile(json: ["name": "a", "size": 1, "attachTo": .object(target)])
                #expect(reply.status == 422)
                #expect(reply.json?["error"]?["details"]?["field"]?.stringValue == field)
            }
        }
    }

    @Test("a batch may only set a file field to a completed file of the project; a value the record holds stays allowed")
    func recordsNeverPointAtIncompleteFiles() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let pending = try await fixture.newFile(size: 10)
            let rejected = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["photo": .string(pending.id)]),
                SyncOperation(opId: newOpID(), collection: "notes", id: "n2", op: .create, data: ["photo": "no-such-file"]),
            ])
            #expect(rejected.map(\.status) == [.rejected, .rejected])
            #expect(rejected[0].error?.code == .validationFailed)
            #expect(rejected[0].error?.details?["field"] == "photo")
            let done = try await fixture.upload(testBytes(10))
            let applied = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["photo": .string(done.id), "title": "x"]),
            ])
            #expect(applied[0].status == .applied)
            // The file is deleted; a full update resending the same id still applies.
            #expect(try await fixture.http.send(.DELETE, "\(Fixture.files)/\(done.id)", token: fixture.tokens["alice"]).status == 200)
            let resend = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .update, data: ["photo": .string(done.id), "title": "y"]),
            ])
            #expect(resend[0].status == .applied)
        }
    }

    @Test("new files past their expiry are swept, rows and bytes; completed ones stay")
    func sweep() async throws {
        let clock = ManualWallClock()
        let fixture = try await Fixture.start(clock: clock) { configuration in
            configuration.fileUploadExpiry = 3600
            configuration.accessTokenLifetime = 30 * 24 * 3600
        }
        try await withCleanup({ await fixture.stop() }) {
            let stale = try await fixture.newFile(size: 10)
            _ = try await fixture.put(stale, testBytes(5), range: "bytes 0-4/10")
            let kept = try await fixture.upload(testBytes(10))
            clock.advance(by: 1800)
            let fresh = try await fixture.newFile(size: 10)
            clock.advance(by: 1801)
            let report = try await fixture.server.server.purgeNow()
            #expect(report.files == 1)
            #expect(try await fixture.http.send(.GET, "\(Fixture.files)/\(stale.id)", token: fixture.tokens["alice"]).status == 404)
            #expect(try await !fixture.hasBlob(stale.id))
            #expect(try await fixture.metadata(fresh.id).status == .new)
            #expect(try await fixture.metadata(kept.id).status == .completed)
            // Bytes arriving keep an upload alive.
            clock.advance(by: 3000)
            _ = try await fixture.put(fresh, testBytes(5), range: "bytes 0-4/10")
            clock.advance(by: 3000)
            #expect(try await fixture.server.server.purgeNow().files == 0)
            #expect(try await fixture.metadata(fresh.id).uploadOffset == 5)
        }
    }
}

/// Yields its chunks, then fails as a dropped connection would.
struct BrokenBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let chunks: [ByteBuffer]
    struct Broken: Error {}

    struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: [ByteBuffer]
        mutating func next() async throws -> ByteBuffer? {
            guard !chunks.isEmpty else { throw Broken() }
            return chunks.removeFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: chunks) }
}

extension Fixture {
    /// Whether the server keeps bytes for the file: with the directory blob store, at exactly `files/PROJECT/ID`
    /// (never a path made of the file's name); with another store, as it counts them.
    func hasBlob(_ id: String) async throws -> Bool {
        if server.server.blobs is DirectoryBlobStore {
            return FileManager.default.fileExists(atPath: server.directory.appendingPathComponent("files/\(Fixture.project)/\(id)").path)
        }
        return try await server.server.blobs.size(project: Fixture.project, id: id) > 0
    }

    /// Step 1 with a raw JSON body as `alice`.
    func createFile(json: JSONValue) async throws -> HTTPReply { try await createFile("alice", json) }
}
