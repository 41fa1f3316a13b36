import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `cairn admin backup` and `restore`: a data directory backed up while its server serves writers, brought back into
/// a new one, and served again to the clients that synced before.
@Suite(
    "Backups of a serving data directory", .serialized, .timeLimit(.minutes(20)),
    .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct BackupToolTests {
    /// What the writers had acknowledged by the server, shared between their tasks and the test.
    final class Acknowledged: Sendable {
        let records = Mutex<Set<String>>([])
        /// Completed files: id and bytes.
        let files = Mutex<[String: Data]>([:])
        let stop = Atomic<Bool>(false)
        let failure = Mutex<String?>(nil)
    }

    @Test("under load: the restored server holds every acknowledged write, a synced client goes on from its cursor, files match")
    func underLoad() async throws {
        let root = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data").path, backup = root.appendingPathComponent("backup").path
        let restored = root.appendingPathComponent("restored").path
        try await Tool.setUpField(["--data", data])
        #expect(try await Tool.run(["admin", "--data", data, "add-user", "opal", "--password", TestServer.password, "--operator"]).status == 0)
        var serving = try Tool.start(["serve", "--data", data, "--port", "0", "--log-level", "error"],
                                     environment: ProcessInfo.processInfo.environment, output: .pipe)
        // Also when a step throws: a server left running outlives the test run (.ci/run fails on it).
        defer { if serving.isRunning { serving.send(SIGKILL); serving.waitUntilExit() } }
        let url = try await Instances.listeningURL(serving)
        let port = try #require(url.port)
        let http = TestHTTPClient(baseURL: url)
        let alice = try await http.login("alice").accessToken

        // Two SDK clients write and sync in a loop; a third uploads files over HTTP.
        let acknowledged = Acknowledged()
        let writers = try await (0..<2).asyncMap { try await Self.client(url, device: "writer-\($0)") }
        var tasks = writers.enumerated().map { index, client in
            Task {
                var count = 0
                while !acknowledged.stop.load(ordering: .relaxed) {
                    let ids = (0..<5).map { "w\(index)-\(count + $0)" }
                    do {
                        for id in ids { try client.create("notes", id: id, data: ["title": .string("note \(id)"), "count": .integer(Int64(count))]) }
                        _ = try await client.sync()
                    } catch {
                        acknowledged.failure.withLock { $0 = "writer \(index): \(error)" }
                        return
                    }
                    acknowledged.records.withLock { $0.formUnion(ids) }
                    count += ids.count
                }
            }
        }
        tasks.append(Task {
            var seed: UInt8 = 1
            while !acknowledged.stop.load(ordering: .relaxed) {
                let bytes = TestFiles.bytes(200_000 + Int(seed) * 1000, seed: seed)
                do {
                    let file = try await http.send(.POST, "/v1/projects/field/files", token: alice, value: NewFileRequest(
                        name: "scan-\(seed).pdf", contentType: "application/pdf", size: Int64(bytes.count), sha256: TestFiles.sha256(bytes)
                    )).decode(FileMetadata.self)
                    guard try await http.send(.PUT, "/v1/projects/field/files/\(file.id)/upload", token: alice, body: bytes).status == 200,
                        try await http.send(.POST, "/v1/projects/field/files/\(file.id)/complete", token: alice).status == 200
                    else { throw CocoaError(.fileWriteUnknown) }
                    acknowledged.files.withLock { $0[file.id] = bytes }
                } catch {
                    acknowledged.failure.withLock { $0 = "file writer: \(error)" }
                    return
                }
                seed &+= 1
            }
        })
        defer {
            acknowledged.stop.store(true, ordering: .relaxed)
            for task in tasks { task.cancel() }
        }

        // A client syncs while the writers write, then they write more before the backup begins.
        try await Self.waitFor(acknowledged) { acknowledged.records.withLock { $0.count } >= 60 && acknowledged.files.withLock { $0.count } >= 2 }
        let reader = try await Self.client(url, device: "reader")
        _ = try await reader.sync()
        let readBefore = try reader.records(Query("notes")).count
        #expect(readBefore >= 60)
        let afterReader = acknowledged.records.withLock { $0.count }
        try await Self.waitFor(acknowledged) { acknowledged.records.withLock { $0.count } >= afterReader + 40 }

        let recordsBefore = acknowledged.records.withLock { $0 }
        let filesBefore = acknowledged.files.withLock { $0 }
        let made = try await Tool.run(["admin", "--data", data, "backup", "--to", backup])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("backed up \(data) to \(backup): database "), "\(made.stdout)")
        // The writers went on during the backup, and go on a little after it.
        let duringAndAfter = acknowledged.records.withLock { $0.count }
        try await Self.waitFor(acknowledged) { acknowledged.records.withLock { $0.count } >= duringAndAfter + 10 }
        acknowledged.stop.store(true, ordering: .relaxed)
        for task in tasks { _ = await task.value }
        #expect(acknowledged.failure.withLock { $0 } == nil)
        #expect(acknowledged.records.withLock { $0.count } > recordsBefore.count, "writes went on while the backup ran")

        // A client that syncs after the backup holds writes the backup does not.
        let late = try await Self.client(url, device: "late")
        _ = try await late.sync()
        let lateBefore = try late.records(Query("notes")).count

        // The running server lists its backup.
        let opal = try await http.login("opal").accessToken
        let listing = try await http.send(.GET, "/v1/admin/backups", token: opal)
        #expect(listing.status == 200, "\(String(decoding: listing.body, as: UTF8.self))")
        let listed = try listing.decode(BackupList.self).backups
        #expect(listed.map(\.path) == [backup])
        serving.send(SIGTERM)
        #expect(await serving.exit() == 0)

        let restore = try await Tool.run(["admin", "--data", restored, "restore", "--from", backup])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.contains("checked"), "\(restore.stdout)")
        serving = try Tool.start(["serve", "--data", restored, "--port", "\(port)", "--log-level", "error"],
                                 environment: ProcessInfo.processInfo.environment, output: .pipe)
        defer {
            serving.send(SIGTERM)
            serving.waitUntilExit()
        }
        #expect(try await Instances.listeningURL(serving) == url)

        // Every write acknowledged before the backup began is there, with the same token.
        var onServer: Set<String> = []
        var cursor: String?
        repeat {
            let page = try await MigrateToolTests.pull(http, token: alice, since: cursor, limit: 1000)
            onServer.formUnion(page.changes.filter { !$0.deleted }.map(\.id))
            cursor = page.hasMore ? page.cursor : nil
        } while cursor != nil
        #expect(recordsBefore.isSubset(of: onServer), "missing: \(recordsBefore.subtracting(onServer).sorted().prefix(10))")
        #expect(try await http.send(.GET, "/v1/admin/backups", token: opal).status == 401, "a token issued after the backup is not in it")
        let relisting = try await http.send(.GET, "/v1/admin/backups", token: try await http.login("opal").accessToken)
        #expect(relisting.status == 200, "\(String(decoding: relisting.body, as: UTF8.self))")
        #expect(try relisting.decode(BackupList.self).backups.map(\.path) == [backup], "the restored server lists the backup it came from")

        // The client synced before the backup pulls only what it lacked, and ends with what the server holds.
        let summary = try await reader.sync()
        #expect(summary.pulled == onServer.count - readBefore, "a delta from its cursor, no new snapshot")
        #expect(Set(try reader.records(Query("notes")).map(\.id)) == onServer)

        // The client synced after the backup holds a cursor ahead of the restored server: it starts again from a
        // snapshot, and drops what the server no longer holds.
        #expect(lateBefore > onServer.count)
        _ = try await late.sync()
        #expect(Set(try late.records(Query("notes")).map(\.id)) == onServer)

        // Files download byte for byte: those completed before the backup, and any it caught completed.
        let listedFiles = try await http.send(.GET, "/v1/projects/field/files?limit=1000", token: alice).decode(FileList.self).files
        let completed = listedFiles.filter { $0.status == .completed }
        #expect(Set(filesBefore.keys).isSubset(of: Set(completed.map(\.id))))
        for file in completed {
            let download = try await http.send(.GET, "/v1/projects/field/files/\(file.id)/content", token: alice)
            #expect(download.status == 200)
            #expect(TestFiles.sha256(download.body) == file.sha256, "\(file.id)")
            if let bytes = filesBefore[file.id] { #expect(download.body == bytes, "\(file.id)") }
        }
        try await reader.close()
        try await late.close()
        for writer in writers { try await writer.close() }
    }

    @Test("refused: a directory that is not empty or is a file, no data directory, no backup, a damaged backup, PostgreSQL")
    func refusals() async throws {
        let root = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data").path
        try await Tool.setUpField(["--data", data])
        let full = root.appendingPathComponent("full")
        try FileManager.default.createDirectory(at: full, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: full.appendingPathComponent("notes.txt"))
        let file = root.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)

        for (arguments, says) in [
            (["--data", data, "backup", "--to", full.path], "is not empty"),
            (["--data", data, "backup", "--to", file.path], "is a file"),
            (["--data", root.appendingPathComponent("nothing").path, "backup", "--to", root.appendingPathComponent("b0").path],
             "is not a server's data directory"),
            (["--data", full.path, "restore", "--from", data], "is not empty"),
            (["--data", root.appendingPathComponent("r0").path, "restore", "--from", data], "is not a Cairn backup"),
            (["--postgres", "postgres://cairn@127.0.0.1:1/cairn", "backup", "--to", root.appendingPathComponent("b1").path], "pg_dump"),
            (["--postgres", "postgres://cairn@127.0.0.1:1/cairn", "restore", "--from", data], "pg_restore"),
        ] {
            let output = try await Tool.run(["admin"] + arguments)
            #expect(output.status != 0, "\(arguments)")
            #expect(output.stderr.contains(says), "\(arguments): \(output.stderr)")
        }
        #expect(try String(contentsOf: full.appendingPathComponent("notes.txt"), encoding: .utf8) == "keep", "a refused directory is untouched")
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("b0").path))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("r0").path))

        // A backup whose file bytes were changed afterwards is refused, and leaves nothing behind.
        let serving = try Tool.start(["serve", "--data", data, "--port", "0", "--log-level", "error"],
                                     environment: ProcessInfo.processInfo.environment, output: .pipe)
        defer { if serving.isRunning { serving.send(SIGKILL); serving.waitUntilExit() } }
        let http = TestHTTPClient(baseURL: try await Instances.listeningURL(serving))
        let token = try await http.login("alice").accessToken
        let bytes = TestFiles.bytes(5000, seed: 9)
        let created = try await http.send(.POST, "/v1/projects/field/files", token: token, value: NewFileRequest(
            name: "a.bin", contentType: "application/octet-stream", size: Int64(bytes.count), sha256: nil)).decode(FileMetadata.self)
        #expect(try await http.send(.PUT, "/v1/projects/field/files/\(created.id)/upload", token: token, body: bytes).status == 200)
        #expect(try await http.send(.POST, "/v1/projects/field/files/\(created.id)/complete", token: token).status == 200)
        serving.send(SIGTERM)
        #expect(await serving.exit() == 0)
        let backup = root.appendingPathComponent("backup")
        let made = try await Tool.run(["admin", "--data", data, "backup", "--to", backup.path])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("1 files (5000 bytes)"), "\(made.stdout)")
        let again = try await Tool.run(["admin", "--data", data, "backup", "--to", backup.path])
        #expect(again.status != 0 && again.stderr.contains("is not empty"), "a backup directory is never written twice")
        let copy = backup.appendingPathComponent("files/field/\(created.id)")
        var damaged = try Data(contentsOf: copy)
        damaged[10] ^= 0xff
        try damaged.write(to: copy)
        let target = root.appendingPathComponent("restored")
        let refused = try await Tool.run(["admin", "--data", target.path, "restore", "--from", backup.path])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("does not match its SHA-256"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target.path), "a refused restore leaves nothing")
        try bytes.write(to: copy)
        let restored = try await Tool.run(["admin", "--data", target.path, "restore", "--from", backup.path])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try Data(contentsOf: target.appendingPathComponent("files/field/\(created.id)")) == bytes)
    }

    /// An SDK client of `field` signed in as alice, its store in memory.
    static func client(_ url: URL, device: String) async throws -> CairnClient {
        var configuration = CairnConfiguration(
            serverURL: url, project: "field", device: device, credentials: .password(user: "alice", password: TestServer.password), store: .inMemory)
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200), maximumAttempts: 5)
        return try await CairnClient.open(configuration)
    }

    /// Waits until `condition` holds, with no wall-clock give-up (the suite's time limit is the safety net); a writer
    /// that failed ends the wait, and the test, with its error.
    static func waitFor(_ acknowledged: Acknowledged, _ condition: () -> Bool) async throws {
        try await waitUntil { condition() || acknowledged.failure.withLock { $0 } != nil }
        let failure = acknowledged.failure.withLock { $0 }
        try #require(failure == nil, "a writer stopped: \(failure ?? "")")
    }
}

extension Sequence {
    /// `map` with an async transform, in order.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
