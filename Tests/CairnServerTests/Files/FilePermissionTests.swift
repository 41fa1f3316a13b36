import AsyncHTTPClient
import NIOHTTP1
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Per-file permissions (PROTOCOL.md, Files): private files seen by their uploader, the admins and the users they are
/// shared with, on every file route, in searches and in batches. Users: ada admin, alice and bob writers, rita reader.
@Suite("Files: sources, private files and sharing, per route")
struct FilePermissionTests {
    /// A completed private file of alice's holding "abc".
    static func privateFile(_ fixture: Fixture) async throws -> FileMetadata {
        let bytes = Data("abc".utf8)
        let created = try await fixture.createFile("alice", [
            "name": "report.pdf", "size": 3, "sha256": .string(sha256(bytes)), "source": "scan",
            "permissions": ["access": "private"],
        ])
        #expect(created.status == 201)
        let file = try created.decode(FileMetadata.self)
        #expect(file.permissions == FilePermissions(access: .private) && file.source == "scan")
        #expect(try await fixture.put(file, bytes).status == 200)
        #expect(try await fixture.complete(file).status == 200)
        return file
    }

    static func status(_ fixture: Fixture, _ method: HTTPMethod, _ path: String, as user: String, json: JSONValue? = nil) async throws -> Int {
        try await fixture.http.send(method, path, token: fixture.tokens[user], json: json).status
    }

    static func listed(_ fixture: Fixture, _ id: String, by user: String) async throws -> Bool {
        let reply = try await fixture.http.send(.GET, Fixture.files, token: fixture.tokens[user])
        return try reply.decode(FileList.self).files.contains { $0.id == id }
    }

    @Test("a private file: its uploader and admins read and change it; other members get 404 on every route and do not find it")
    func privateFileRoutes() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let file = try await Self.privateFile(fixture)
            let path = "\(Fixture.files)/\(file.id)"
            for user in ["alice", "ada"] {
                #expect(try await Self.status(fixture, .GET, path, as: user) == 200)
                #expect(try await fixture.http.send(.GET, "\(path)/content", token: fixture.tokens[user]).body == Data("abc".utf8))
                #expect(try await Self.listed(fixture, file.id, by: user))
            }
            for user in ["bob", "rita"] {
                #expect(try await Self.status(fixture, .GET, path, as: user) == 404)
                #expect(try await Self.status(fixture, .GET, "\(path)/content", as: user) == 404)
                #expect(try await !Self.listed(fixture, file.id, by: user))
            }
            // The writers' routes: bob is a writer, and the file is not his.
            #expect(try await Self.status(fixture, .HEAD, file.uploadUrl, as: "bob") == 404)
            #expect(try await Self.status(fixture, .PUT, file.uploadUrl, as: "bob") == 404)
            #expect(try await Self.status(fixture, .POST, "\(path)/complete", as: "bob") == 404)
            #expect(try await Self.status(fixture, .PATCH, path, as: "bob", json: ["name": "mine"]) == 404)
            #expect(try await Self.status(fixture, .DELETE, path, as: "bob") == 404)
            #expect(try await Self.status(fixture, .POST, "\(path)/share", as: "bob", json: ["users": ["bob"]]) == 404)
            // Never public: not at the public path, and not made public while private.
            #expect(try await fixture.http.send(.GET, "/v1/public/files/\(file.id)").status == 404)
            let publish = try await fixture.http.send(.PATCH, path, token: fixture.tokens["alice"], json: ["public": true])
            #expect(publish.status == 422)
            #expect(try publish.decode(ErrorEnvelope.self).error.details?["field"] == "public")
            let both = try await fixture.createFile("alice", ["name": "x", "size": 1, "public": true, "permissions": ["access": "private"]])
            #expect(both.status == 422)
            // The uploader changes it; nothing of bob's request above did.
            let renamed = try await fixture.http.send(.PATCH, path, token: fixture.tokens["alice"], json: ["name": "r.pdf", "source": "camera"])
            #expect(try renamed.decode(FileMetadata.self).name == "r.pdf")
            #expect(try renamed.decode(FileMetadata.self).source == "camera")
            #expect(try await Self.status(fixture, .DELETE, path, as: "ada") == 200)
        }
    }

    @Test("sharing: the uploader or an admin shares with named users, who read it but do not change or share it; unsharing hides it again")
    func sharing() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let file = try await Self.privateFile(fixture)
            let path = "\(Fixture.files)/\(file.id)"
            // A reader may not share (role), a writer who cannot see it gets 404.
            #expect(try await Self.status(fixture, .POST, "\(path)/share", as: "rita", json: ["users": ["rita"]]) == 403)
            let shared = try await fixture.http.send(.POST, "\(path)/share", token: fixture.tokens["alice"], value: FileShareRequest(users: ["bob", "rita", "bob"]))
            #expect(shared.status == 200)
            #expect(try shared.decode(FileMetadata.self).permissions.sharedWith == ["bob", "rita"])
            for user in ["bob", "rita"] {
                #expect(try await Self.status(fixture, .GET, path, as: user) == 200)
                #expect(try await fixture.http.send(.GET, "\(path)/content", token: fixture.tokens[user]).body == Data("abc".utf8))
                #expect(try await Self.listed(fixture, file.id, by: user))
            }
            // Shared users read only.
            #expect(try await Self.status(fixture, .PATCH, path, as: "bob", json: ["name": "mine"]) == 403)
            #expect(try await Self.status(fixture, .DELETE, path, as: "bob") == 403)
            #expect(try await Self.status(fixture, .POST, "\(path)/share", as: "bob", json: ["users": ["olga"]]) == 403)
            #expect(try await Self.status(fixture, .PATCH, path, as: "bob", json: ["permissions": ["access": "project"]]) == 403)
            // An admin unshares.
            let unshared = try await fixture.http.send(.POST, "\(path)/unshare", token: fixture.tokens["ada"], json: ["users": ["bob"]])
            #expect(try unshared.decode(FileMetadata.self).permissions.sharedWith == ["rita"])
            #expect(try await Self.status(fixture, .GET, path, as: "bob") == 404)
            #expect(try await Self.status(fixture, .GET, path, as: "rita") == 200)
            // Bad names and too many users are 422 naming the field.
            let control = try await fixture.http.send(.POST, "\(path)/share", token: fixture.tokens["alice"], json: ["users": ["a\nb"]])
            #expect(control.status == 422)
            let many = try await fixture.http.send(
                .POST, "\(path)/share", token: fixture.tokens["alice"], value: FileShareRequest(users: (0...100).map { "user\($0)" }))
            #expect(try many.decode(ErrorEnvelope.self).error.details?["field"] == "users")
            // Made project-wide by its uploader, everyone in the project reads it again.
            let opened = try await fixture.http.send(.PATCH, path, token: fixture.tokens["alice"], json: ["permissions": ["access": "project"]])
            #expect(try opened.decode(FileMetadata.self).permissions.access == .project)
            #expect(try await Self.status(fixture, .GET, path, as: "bob") == 200)
        }
    }

    @Test("a file created without permissions is project-wide as before; a batch may not set a record field to a private file its writer cannot see")
    func defaultsAndBatches() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let plain = try await fixture.upload(Data("xyz".utf8))
            #expect(plain.permissions == .project && plain.source == nil)
            #expect(try await Self.status(fixture, .GET, "\(Fixture.files)/\(plain.id)", as: "bob") == 200)
            let raw = try await fixture.http.send(.GET, "\(Fixture.files)/\(plain.id)", token: fixture.tokens["bob"])
            #expect(raw.json?["permissions"] == ["access": "project", "sharedWith": []])
            #expect(raw.json?["source"] == .null)

            let file = try await Self.privateFile(fixture)
            let write = { (user: String) in
                try await fixture.push(user, [SyncOperation(opId: newOpID(), collection: "notes", id: "n-\(user)", op: .create, data: ["photo": .string(file.id)])])
            }
            let refused = try await write("bob")
            #expect(refused[0].status == .rejected)
            #expect(refused[0].error?.details?["field"] == "photo")
            #expect(try await write("alice")[0].status == .applied)
            _ = try await fixture.http.send(.POST, "\(Fixture.files)/\(file.id)/share", token: fixture.tokens["alice"], json: ["users": ["bob"]])
            #expect(try await write("bob")[0].status == .applied)
        }
    }
}
