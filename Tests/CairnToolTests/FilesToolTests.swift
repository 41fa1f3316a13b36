import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("cairn files", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"), .serialized, .timeLimit(.minutes(20)))
struct FilesToolTests {
    func arguments(_ command: [String], store: String, fixture: Fixture) -> [String] {
        ["files"] + command + ["--store", store, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"]
    }

    /// A server with the note n1, and a new folder holding `photo.jpg` with `bytes`; the store file is `cli.sqlite` there.
    static func start(photo bytes: Data) async throws -> (fixture: Fixture, store: String, source: URL) {
        let fixture = try await Fixture.start()
        _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "a"])])
        let folder = Tool.temporaryDirectory()
        let source = folder.appendingPathComponent("photo.jpg")
        try bytes.write(to: source)
        return (fixture, folder.appendingPathComponent("cli.sqlite").path, source)
    }

    @Test("upload, list, info, download and delete, with plain progress lines when not on a terminal")
    func roundTrip() async throws {
        let bytes = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let (fixture, store, source) = try await Self.start(photo: bytes)
        try await withCleanup({ await fixture.stop() }) {
            let folder = source.deletingLastPathComponent()
            let environment = ["CAIRN_PASSWORD": TestServer.password]

            let upload = try await Tool.run(
                arguments(["upload", source.path, "--type", "image/jpeg", "--tag", "site-7", "--attach", "notes/n1/photo"], store: store, fixture: fixture),
                environment: environment)
            #expect(upload.status == 0, "\(upload.stderr)")
            let id = upload.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(id.count == 36)
            #expect(upload.stderr.contains("upload photo.jpg: 100%"))
            let record = try await fixture.pullAll("bob", "notes").changes.first { $0.id == "n1" }
            #expect(record?.data?["photo"] == .string(id))

            let list = try await Tool.run(arguments(["list", "--tag", "site-7"], store: store, fixture: fixture), environment: environment)
            #expect(list.status == 0)
            #expect(list.stdout.hasPrefix("\(id)\tcompleted\t3000000\tphoto.jpg\tsite-7"))
            let info = try await Tool.run(arguments(["info", id], store: store, fixture: fixture), environment: environment)
            let metadata = try CairnJSON.decode(FileMetadata.self, from: Data(info.stdout.utf8))
            #expect(metadata.sha256 == TestFiles.sha256(bytes))

            let output = folder.appendingPathComponent("copy.jpg")
            let download = try await Tool.run(
                arguments(["download", id, "--output", output.path], store: store, fixture: fixture), environment: environment)
            #expect(download.status == 0, "\(download.stderr)")
            #expect(try Data(contentsOf: output) == bytes)

            let delete = try await Tool.run(arguments(["delete", id], store: store, fixture: fixture), environment: environment)
            #expect(delete.status == 0)
            let gone = try await Tool.run(arguments(["download", id, "--output", output.path + ".2"], store: store, fixture: fixture),
                                                  environment: environment)
            #expect(gone.status == 1)
            #expect(gone.stderr.contains("file_not_ready") || gone.stderr.contains("deleted"))
            let missing = try await Tool.run(arguments(["upload", folder.appendingPathComponent("nope").path], store: store, fixture: fixture),
                                                     environment: environment)
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("cannot"))
        }
    }

    @Test("delete works offline: the deletion and the cleared field are queued in the store, and the next sync sends them")
    func deleteOffline() async throws {
        let (fixture, store, source) = try await Self.start(photo: Data(repeating: 7, count: 10_000))
        try await withCleanup({ await fixture.stop() }) {
            let environment = ["CAIRN_PASSWORD": TestServer.password]
            let upload = try await Tool.run(
                arguments(["upload", source.path, "--attach", "notes/n1/photo"], store: store, fixture: fixture), environment: environment)
            #expect(upload.status == 0, "\(upload.stderr)")
            let id = upload.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

            // No server answers on port 1.
            let offline = try await Tool.run(
                ["files", "delete", id, "--detach", "notes/n1/photo", "--store", store, "--server", "http://127.0.0.1:1"], environment: environment)
            #expect(offline.status == 0, "\(offline.stderr)")
            #expect(offline.stdout.contains("queued the deletion of \(id)"))
            let files = "/v1/projects/\(Fixture.project)/files/\(id)"
            #expect(try await fixture.http.send(.GET, files, token: fixture.tokens["alice"]).json?["status"] == "completed")

            let sync = try await Tool.run(
                ["sync", "--store", store, "--server", fixture.server.baseURL.absoluteString], environment: environment)
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(try await fixture.http.send(.GET, files, token: fixture.tokens["alice"]).json?["status"] == "deleted")
            #expect(try await fixture.pullAll("bob", "notes").changes.last { $0.id == "n1" }?.data?["photo"] == nil)
        }
    }

    @Test("an upload killed part-way resumes from the server's offset when run again")
    func killedUploadResumes() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let folder = Tool.temporaryDirectory()
            let store = folder.appendingPathComponent("cli.sqlite").path
            let (source, hash) = try TestFiles.large(megabytes: 150)
            defer { try? FileManager.default.removeItem(at: source) }
            let process = try Tool.start(arguments(["upload", source.path], store: store, fixture: fixture),
                                         environment: ["CAIRN_PASSWORD": TestServer.password])
            // Kill it once the server has some of the bytes.
            var received: Int64 = 0
            while process.isRunning {
                try await Task.sleep(for: .milliseconds(20))
                let files = try await fixture.server.server.storage.searchFiles(project: Fixture.project, query: FileQuery(statuses: [.new], limit: 10))
                if let file = files.first {
                    received = try await fixture.server.server.blobs.size(project: Fixture.project, id: file.id)
                    if received > 0 { break }
                }
            }
            process.send(SIGKILL)
            await process.exit()
            try #require(received > 0, "the upload finished before it could be killed")
            let rerun = try await Tool.run(["sync", "--store", store], environment: ["CAIRN_PASSWORD": TestServer.password])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            let files = try await fixture.server.server.storage.searchFiles(project: Fixture.project, query: FileQuery(statuses: [.completed], limit: 10))
            #expect(files.count == 1)
            #expect(files.first?.sha256 == hash)
            print("killed upload: \(received >> 20) MB had arrived before the kill")
        }
    }

    @Test("admin limits shows and sets a project's file limits, and goes back to the defaults")
    func adminLimits() async throws {
        let data = Tool.temporaryDirectory().path
        #expect(try await Tool.run(["admin", "--data", data, "add-project", "field"]).status == 0)
        let shown = try await Tool.run(["admin", "--data", data, "limits", "--project", "field"])
        #expect(shown.stdout.contains("the server's default"))
        let set = try await Tool.run(["admin", "--data", data, "limits", "--project", "field", "--file-bytes", "1000", "--project-bytes", "5000"])
        #expect(set.status == 0)
        #expect(set.stdout.contains("at most 1000") && set.stdout.contains("5000 bytes in all"))
        let back = try await Tool.run(["admin", "--data", data, "limits", "--project", "field", "--file-bytes", "default"])
        #expect(back.stdout.contains("the server's default") && back.stdout.contains("5000"))
        let bad = try await Tool.run(["admin", "--data", data, "limits", "--project", "field", "--file-bytes", "lots"])
        #expect(bad.status == 1)
        let unknown = try await Tool.run(["admin", "--data", data, "limits", "--project", "nope", "--file-bytes", "10"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("not_found") || unknown.stderr.contains("does not exist"))
    }
}
