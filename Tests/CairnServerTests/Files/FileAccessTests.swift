import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Files: roles, public reads, names, ranges, limits, search and deletion")
struct FileAccessTests {
    @Test("readers download but cannot upload; non-members get 404; public files need no token, private ones do")
    func roles() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let readerCreate = try await fixture.createFile("rita", ["name": "a", "size": 1])
            #expect(readerCreate.status == 403)
            let file = try await fixture.newFile(size: 3)
            #expect(try await fixture.put(file, Data("abc".utf8), user: "rita").status == 403)
            #expect(try await fixture.http.send(.POST, "\(Fixture.files)/\(file.id)/complete", token: fixture.tokens["rita"]).status == 403)
            _ = try await fixture.put(file, Data("abc".utf8))
            _ = try await fixture.complete(file)
            let content = "\(Fixture.files)/\(file.id)/content"
            #expect(try await fixture.http.send(.GET, content, token: fixture.tokens["rita"]).body == Data("abc".utf8))
            for path in [content, "\(Fixture.files)/\(file.id)", Fixture.files] {
                #expect(try await fixture.http.send(.GET, path, token: fixture.tokens["olga"]).status == 404)
                #expect(try await fixture.http.send(.GET, path).status == 401)
            }
            // Private: not at the public path.
            #expect(try await fixture.http.send(.GET, "/v1/public/files/\(file.id)").status == 404)
            let published = try await fixture.http.send(.PATCH, "\(Fixture.files)/\(file.id)", token: fixture.tokens["alice"], json: ["public": true])
            #expect(try published.decode(FileMetadata.self).public)
            let open = try await fixture.http.send(.GET, "/v1/public/files/\(file.id)")
            #expect(open.status == 200)
            #expect(open.body == Data("abc".utf8))
            _ = try await fixture.http.send(.PATCH, "\(Fixture.files)/\(file.id)", token: fixture.tokens["alice"], json: ["public": false])
            #expect(try await fixture.http.send(.GET, "/v1/public/files/\(file.id)").status == 404)
            // A public file that is not completed is not readable either.
            let unfinished = try await fixture.newFile(size: 5, public: true)
            #expect(try await fixture.http.send(.GET, "/v1/public/files/\(unfinished.id)").status == 404)
            #expect(try await fixture.http.send(.GET, "/v1/public/files/..%2F..%2Fcairn.sqlite").status == 404)
        }
    }

    @Test("names are metadata: traversal, slashes and long names are harmless; empty, NUL and too long are refused")
    func names() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for name in ["../../etc/passwd", "a/b\\c", String(repeating: "é", count: 127), "..", "ünïcødé 📷.jpg"] {
                let file = try await fixture.upload(Data("x".utf8), name: name)
                #expect(file.name == name)
                #expect(try await fixture.hasBlob(file.id))
                let download = try await fixture.http.send(.GET, "\(Fixture.files)/\(file.id)/content", token: fixture.tokens["alice"])
                let disposition = try #require(download.header("Content-Disposition"))
                #expect(disposition.hasPrefix("attachment; filename=\""))
                #expect(!disposition.contains("\r") && !disposition.contains("\n"))
            }
            // Nothing was written outside the data directory's files folder.
            #expect(!FileManager.default.fileExists(atPath: fixture.server.directory.deletingLastPathComponent().appendingPathComponent("etc").path))
            for name: JSONValue in ["", "a\u{0}b", "line\nbreak", .string(String(repeating: "a", count: 256))] {
                let reply = try await fixture.createFile(json: ["name": name, "size": 1])
                #expect(reply.status == 422)
                #expect(reply.json?["error"]?["details"]?["field"] == "name")
            }
            let badType = try await fixture.createFile(json: ["name": "a", "size": 1, "contentType": "text/plain\r\nX-Evil: 1"])
            #expect(badType.status == 422)
            let badHash = try await fixture.createFile(json: ["name": "a", "size": 1, "sha256": "xyz"])
            #expect(badHash.status == 422)
            let negative = try await fixture.createFile(json: ["name": "a", "size": -1])
            #expect(negative.status == 422)
        }
    }

    @Test("Range downloads return the right bytes; past the end is 416; If-None-Match is 304")
    func ranges() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bytes = testBytes(1000)
            let file = try await fixture.upload(bytes)
            let path = "\(Fixture.files)/\(file.id)/content"
            func get(_ range: String) async throws -> HTTPReply {
                try await fixture.http.send(.GET, path, token: fixture.tokens["alice"], headers: ["Range": range])
            }
            let first = try await get("bytes=0-9")
            #expect(first.status == 206)
            #expect(first.body == bytes[0..<10])
            #expect(first.header("Content-Range") == "bytes 0-9/1000")
            let tail = try await get("bytes=990-")
            #expect(tail.body == bytes[990...])
            let suffix = try await get("bytes=-5")
            #expect(suffix.body == bytes[995...])
            #expect(suffix.header("Content-Range") == "bytes 995-999/1000")
            let clipped = try await get("bytes=995-5000")
            #expect(clipped.body == bytes[995...])
            let past = try await get("bytes=1000-")
            #expect(past.status == 416)
            #expect(past.header("Content-Range") == "bytes */1000")
            #expect(past.errorCode == "range_not_satisfiable")
            let several = try await get("bytes=0-1,5-6")
            #expect(several.status == 200)
            #expect(several.body == bytes)
            let cached = try await fixture.http.send(.GET, path, token: fixture.tokens["alice"], headers: ["If-None-Match": "\"\(file.sha256!)\""])
            #expect(cached.status == 304)
            let publicRange = try await fixture.http.send(.PATCH, "\(Fixture.files)/\(file.id)", token: fixture.tokens["alice"], json: ["public": true])
            #expect(publicRange.status == 200)
            let open = try await fixture.http.send(.GET, "/v1/public/files/\(file.id)", headers: ["Range": "bytes=10-19"])
            #expect(open.status == 206)
            #expect(open.body == bytes[10..<20])
        }
    }

    @Test("limits: a file over the size limit and a project over its quota answer 413 with the limit; admins set them per project")
    func limits() async throws {
        let fixture = try await Fixture.start { configuration in
            configuration.maximumFileBytes = 1000
            configuration.maximumProjectFileBytes = 2500
        }
        try await withCleanup({ await fixture.stop() }) {
            let big = try await fixture.createFile(json: ["name": "a", "size": 1001])
            #expect(big.status == 413)
            #expect(big.errorCode == "file_too_large")
            #expect(big.json?["error"]?["details"]?["limit"] == 1000)
            _ = try await fixture.newFile(size: 1000)
            _ = try await fixture.newFile(size: 1000)
            let over = try await fixture.createFile(json: ["name": "a", "size": 501])
            #expect(over.status == 413)
            #expect(over.errorCode == "quota_exceeded")
            #expect(over.json?["error"]?["details"]?["limit"] == 2500)
            #expect(try await fixture.createFile(json: ["name": "a", "size": 500]).status == 201)
            try await fixture.server.server.admin.setFileLimits(project: "field", FileLimits(maximumFileBytes: 5000, maximumProjectBytes: 10_000))
            #expect(try await fixture.createFile(json: ["name": "a", "size": 4000]).status == 201)
            // Deleted files no longer count.
            let list = try await fixture.http.send(.GET, "\(Fixture.files)?limit=1000", token: fixture.tokens["alice"]).decode(FileList.self)
            for file in list.files { _ = try await fixture.http.send(.DELETE, "\(Fixture.files)/\(file.id)", token: fixture.tokens["alice"]) }
            #expect(try await fixture.createFile(json: ["name": "a", "size": 5000]).status == 201)
        }
    }

    @Test("search by status, name pattern and tags, in pages")
    func search() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let a = try await fixture.upload(Data("a".utf8), name: "Site-Photo-1.jpg", tags: ["site-7", "roof"])
            let b = try await fixture.upload(Data("b".utf8), name: "site-photo-2.jpg", tags: ["site-7"])
            let c = try await fixture.newFile(name: "invoice.pdf", size: 3, tags: ["roof"])
            func ids(_ query: String) async throws -> Set<String> {
                let reply = try await fixture.http.send(.GET, "\(Fixture.files)?\(query)", token: fixture.tokens["rita"])
                #expect(reply.status == 200)
                return Set(try reply.decode(FileList.self).files.map(\.id))
            }
            #expect(try await ids("") == [a.id, b.id, c.id])
            #expect(try await ids("status=new") == [c.id])
            #expect(try await ids("status=completed") == [a.id, b.id])
            #expect(try await ids("name=site-photo%25") == [a.id, b.id])
            #expect(try await ids("tag=site-7&tag=roof") == [a.id])
            #expect(try await ids("tag=roof") == [a.id, c.id])
            #expect(try await fixture.http.send(.GET, "\(Fixture.files)?status=lost", token: fixture.tokens["rita"]).status == 422)
            var seen: [String] = []
            var after: String?
            repeat {
                let page = try await fixture.http.send(
                    .GET, "\(Fixture.files)?limit=2" + (after.map { "&after=\($0)" } ?? ""), token: fixture.tokens["rita"]
                ).decode(FileList.self)
                seen += page.files.map(\.id)
                after = page.next
            } while after != nil
            #expect(seen == [a.id, b.id, c.id].sorted())
            _ = try await fixture.http.send(.DELETE, "\(Fixture.files)/\(b.id)", token: fixture.tokens["alice"])
            #expect(try await ids("status=deleted") == [b.id])
            let renamed = try await fixture.http.send(
                .PATCH, "\(Fixture.files)/\(a.id)", token: fixture.tokens["alice"], json: ["name": "roof.jpg", "tags": ["x"]])
            #expect(try renamed.decode(FileMetadata.self).name == "roof.jpg")
            #expect(try await ids("tag=x") == [a.id])
        }
    }

    @Test("delete removes the bytes and marks the file deleted; it can no longer be downloaded or uploaded to")
    func delete() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let file = try await fixture.upload(testBytes(100))
            #expect(try await fixture.hasBlob(file.id))
            #expect(try await fixture.http.send(.DELETE, "\(Fixture.files)/\(file.id)", token: fixture.tokens["rita"]).status == 403)
            let deleted = try await fixture.http.send(.DELETE, "\(Fixture.files)/\(file.id)", token: fixture.tokens["alice"])
            #expect(try deleted.decode(FileMetadata.self).status == .deleted)
            #expect(try await !fixture.hasBlob(file.id))
            let download = try await fixture.http.send(.GET, "\(Fixture.files)/\(file.id)/content", token: fixture.tokens["alice"])
            #expect(download.status == 409)
            #expect(download.errorCode == "file_not_ready")
            let pending = try await fixture.newFile(size: 4)
            _ = try await fixture.http.send(.DELETE, "\(Fixture.files)/\(pending.id)", token: fixture.tokens["alice"])
            #expect(try await fixture.put(pending, Data("abcd".utf8)).errorCode == "file_not_new")
            #expect(try await fixture.http.send(.GET, "\(Fixture.files)/nope", token: fixture.tokens["alice"]).status == 404)
        }
    }
}
