import AsyncHTTPClient
import CairnProtocol
import CairnTesting
import Foundation
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several `cairn serve` processes on one PostgreSQL database behave as one server.
@Suite("Several server instances on one PostgreSQL database", .serialized, .timeLimit(.minutes(20)))
struct MultiInstanceTests {
    @Test("writers spread over three instances; a reader on one sees every change exactly once, in order")
    func spreadWriters() async throws {
        guard let instances = try await Instances.start(count: 3) else { return }
        defer { instances.stop() }
        let writers = 8, batches = 15, perBatch = 6
        let total = writers * batches * perBatch
        let done = FinishedWriters()
        let reader = instances.clients[0]
        let start = try await instances.pull(reader, since: nil, limit: 1).cursor
        async let followed: [Change] = {
            var seen: [Change] = []
            var cursor = start
            while true {
                let writing = await done.count < writers
                let page = try await instances.pull(reader, since: cursor, limit: 7)
                seen += page.changes
                cursor = page.cursor
                if !writing && !page.hasMore { return seen }
            }
        }()
        let acknowledged = try await withThrowingTaskGroup(of: [String].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let client = instances.clients[writer % instances.clients.count]
                    var ids: [String] = []
                    for batch in 0..<batches {
                        let operations = (0..<perBatch).map { index in
                            SyncOperation(opId: newOpID(), collection: "notes", id: "w\(writer)-b\(batch)-\(index)", op: .create,
                                          data: ["count": .integer(Int64(index))])
                        }
                        let results = try await instances.push(client, operations)
                        #expect(results.allSatisfy { $0.status == .applied })
                        ids += results.map { $0.record?.id ?? "" }
                    }
                    await done.finish()
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let seen = try await followed
        #expect(acknowledged.count == total)
        #expect(seen.count == total, "the reader saw \(seen.count) of \(total) changes")
        #expect(Set(seen.map(\.id)) == Set(acknowledged))
        #expect(seen.map(\.version) == Array(1...Int64(total)), "versions are gap-free and in order")
    }

    @Test("the same batch sent to two instances at once applies once")
    func sameBatchTwice() async throws {
        guard let instances = try await Instances.start(count: 3) else { return }
        defer { instances.stop() }
        for round in 0..<20 {
            let operations = (0..<5).map { index in
                SyncOperation(opId: newOpID(), collection: "notes", id: "r\(round)-\(index)", op: .create, data: ["count": .integer(Int64(round))])
            }
            async let first = instances.push(instances.clients[1], operations)
            async let second = instances.push(instances.clients[2], operations)
            let (a, b) = try await (first, second)
            #expect(a.map { $0.record?.version } == b.map { $0.record?.version }, "both answers carry the one application's versions")
        }
        let page = try await instances.pull(instances.clients[0], since: nil, limit: 1000)
        #expect(page.changes.count == 100)
        #expect(page.changes.map(\.version) == Array(1...100), "no operation was applied twice")
    }

    @Test("a notice written through one instance arrives over SSE at the other two")
    func noticesCrossInstances() async throws {
        guard let instances = try await Instances.start(count: 3) else { return }
        defer { instances.stop() }
        var streams: [EventStreamReader] = []
        for client in instances.clients.dropFirst() {
            let stream = try await EventStreamReader.open(
                url: client.baseURL.appendingPathComponent("v1/projects/field/events"), token: instances.token)
            streams.append(stream)
        }
        defer { for stream in streams { Task { await stream.close() } } }
        try await Task.sleep(for: .milliseconds(300))
        let result = try await instances.push(instances.clients[0], [
            SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "hello"]),
        ])
        let version = try #require(result.first?.record?.version)
        for stream in streams {
            var notice: JSONValue?
            while notice?["collection"] != "notes" {
                notice = try JSONValue(parsing: Array(try await stream.nextData().utf8))
            }
            #expect(notice?["version"] == .integer(version))
        }
    }

    @Test("failed sign-ins spread over the instances are counted together")
    func sharedThrottle() async throws {
        guard let instances = try await Instances.start(count: 3) else { return }
        defer { instances.stop() }
        // Five failures in five minutes lock a name; they go to three different instances.
        for attempt in 0..<5 {
            let reply = try await instances.clients[attempt % 3].send(.POST, "/v1/auth/login", json: ["username": "alice", "password": "wrong password"])
            #expect(reply.status == 401)
        }
        for client in instances.clients {
            let locked = try await client.send(.POST, "/v1/auth/login", json: ["username": "alice", "password": .string(TestServer.password)])
            #expect(locked.status == 429)
            #expect(locked.errorCode == "rate_limited")
        }
    }

    @Test("a refresh token rotates on one instance, and its reuse on another revokes the sign-in everywhere")
    func refreshAcrossInstances() async throws {
        guard let instances = try await Instances.start(count: 3) else { return }
        defer { instances.stop() }
        let signIn = try await instances.clients[0].login("alice")
        let rotated = try await instances.clients[1].send(.POST, "/v1/auth/refresh", json: ["refreshToken": .string(signIn.refreshToken)])
        #expect(rotated.status == 200)
        let fresh = try rotated.decode(TokenResponse.self)
        let reused = try await instances.clients[2].send(.POST, "/v1/auth/refresh", json: ["refreshToken": .string(signIn.refreshToken)])
        #expect(reused.status == 401)
        // The reuse revoked the whole sign-in: the rotated pair is dead on every instance.
        for client in instances.clients {
            #expect(try await client.send(.GET, "/v1/projects/field/schema", token: fresh.accessToken).status == 401)
        }
        let again = try await instances.clients[0].send(.POST, "/v1/auth/refresh", json: ["refreshToken": .string(fresh.refreshToken)])
        #expect(again.status == 401)
    }

    @Test("killing one instance during writes loses no acknowledged write")
    func killedInstance() async throws {
        guard let instances = try await Instances.start(count: 3) else { return }
        defer { instances.stop() }
        let acknowledged = try await withThrowingTaskGroup(of: [String].self) { group in
            for writer in 0..<6 {
                group.addTask {
                    let client = instances.clients[writer % 3]
                    var ids: [String] = []
                    for batch in 0..<40 {
                        let operations = (0..<5).map { index in
                            SyncOperation(opId: newOpID(), collection: "notes", id: "k\(writer)-\(batch)-\(index)", op: .create, data: [:])
                        }
                        // Writers on the killed instance stop at their first refused batch; the others go on.
                        guard let results = try? await instances.push(client, operations) else { break }
                        ids += results.compactMap { $0.status == .applied ? $0.record?.id : nil }
                    }
                    return ids
                }
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(400))
                instances.processes[2].send(SIGKILL)
                return []
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(acknowledged.count > 0)
        var present = Set<String>()
        var cursor: String?
        while true {
            let page = try await instances.pull(instances.clients[0], since: cursor, limit: 1000)
            present.formUnion(page.changes.map(\.id))
            cursor = page.cursor
            if !page.hasMore { break }
        }
        let lost = Set(acknowledged).subtracting(present)
        #expect(lost.isEmpty, "\(lost.count) acknowledged writes are missing")
    }
}

/// What operators expect of one instance: readiness that follows the database, and a clean stop on SIGTERM.
@Suite("A server instance as operators run it", .serialized)
struct OperatorTests {
    @Test("/ready answers 200 while PostgreSQL answers and 503 once it is gone; /health stays 200")
    func readiness() async throws {
        guard PostgresCluster.isAvailable(for: "the readiness test") else { return }
        // A cluster of its own, to stop under the server.
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        let url = try cluster.makeDatabase()
        let process = try Tool.start(
            ["serve", "--postgres", url, "--port", "0", "--log-level", "error"], environment: ProcessInfo.processInfo.environment, output: .pipe)
        defer {
            process.send(SIGKILL)
            process.waitUntilExit()
        }
        let client = TestHTTPClient(baseURL: try await Instances.listeningURL(process))
        #expect(try await client.send(.GET, "/ready").status == 200)
        cluster.stop()
        let down = try await client.send(.GET, "/ready")
        #expect(down.status == 503)
        #expect(down.errorCode == "unavailable")
        #expect(down.header("Retry-After") == "5")
        #expect(try await client.send(.GET, "/health").status == 200)
        // A request that needs the database does not wait for ever: it answers 503 once no connection came.
        let started = ContinuousClock.now
        let login = try await client.send(.POST, "/v1/auth/login", json: ["username": "alice", "password": "a long password"])
        #expect(login.status == 503)
        #expect(login.errorCode == "unavailable")
        #expect(ContinuousClock.now - started < .seconds(45))
    }

    @Test("serve reads its settings from CAIRN_ variables, flags win, and a bad value names its variable")
    func environment() async throws {
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var environment = ProcessInfo.processInfo.environment
        environment["CAIRN_PORT"] = "70000"
        let bad = try await Tool.run(["serve"], environment: environment)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("port"), "\(bad.stderr)")
        environment["CAIRN_PORT"] = "not-a-number"
        #expect(try await Tool.run(["serve"], environment: environment).stderr.contains("CAIRN_PORT=not-a-number"))
        environment["CAIRN_DATA"] = data.path
        environment["CAIRN_LOG_LEVEL"] = "error"
        // The flag wins over CAIRN_PORT.
        let process = try Tool.start(["serve", "--port", "0"], environment: environment, output: .pipe)
        defer {
            process.send(SIGTERM)
            process.waitUntilExit()
        }
        let client = TestHTTPClient(baseURL: try await Instances.listeningURL(process))
        #expect(try await client.send(.GET, "/health").status == 200)
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("cairn.sqlite").path))
    }

    @Test("SIGTERM lets a request in flight finish, ends live streams with a retry hint, then the process exits 0")
    func gracefulStop() async throws {
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        try await Tool.setUpField(["--data", data.appendingPathComponent("server").path])
        let process = try Tool.start(
            ["serve", "--data", data.appendingPathComponent("server").path, "--port", "0", "--log-level", "error"],
            environment: ProcessInfo.processInfo.environment, output: .pipe)
        let client = TestHTTPClient(baseURL: try await Instances.listeningURL(process))
        let token = try await client.login("alice").accessToken
        var request = HTTPClientRequest(url: client.baseURL.absoluteString + "/v1/projects/field/events")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        #expect(response.status == .ok)
        async let text: String = {
            var text = ""
            for try await chunk in response.body { text += String(buffer: chunk) }
            return text
        }()
        // An upload in flight: most of its body is sent before SIGTERM, the rest after.
        let size = 3_000_000
        let first = 2_000_000  // more than the server's 1 MB write, so it shows in the upload offset
        let created = try await client.send(.POST, "/v1/projects/field/files", token: token, json: [
            "name": "scan.bin", "contentType": "application/octet-stream", "size": .integer(Int64(size)),
        ])
        let fileID = try #require(created.json?["id"]?.stringValue)
        let (halves, half) = AsyncStream<ByteBuffer>.makeStream()
        half.yield(ByteBuffer(repeating: 7, count: first))
        var upload = HTTPClientRequest(url: client.baseURL.absoluteString + "/v1/projects/field/files/\(fileID)/upload")
        upload.method = .PUT
        upload.headers.add(name: "Authorization", value: "Bearer \(token)")
        upload.body = .stream(halves, length: .known(Int64(size)))
        async let uploaded = HTTPClient.shared.execute(upload, timeout: .seconds(120))
        // SIGTERM only once the server is writing the upload's bytes (no guess at how long that takes on a busy
        // machine), and the second half only once the stop has begun: the server has ended the live stream.
        while try await client.send(.HEAD, "/v1/projects/field/files/\(fileID)/upload", token: token).header("Upload-Offset") ?? "0" == "0" {
            try await Task.sleep(for: .milliseconds(20))
        }
        process.send(SIGTERM)
        let received = try await text.components(separatedBy: "\n")
        #expect(received.contains("retry: 1000"), "\(received)")
        half.yield(ByteBuffer(repeating: 7, count: size - first))
        half.finish()
        #expect(try await uploaded.status == .ok, "the request in flight at SIGTERM finishes")
        #expect(await process.exit() == 0)
    }
}

/// `count` `cairn serve` processes on a new database of the test process's PostgreSQL cluster, with the project
/// `field` (the fixture's schema) and the writer `alice`, signed in.
struct Instances: Sendable {
    let processes: [ChildProcess]
    let clients: [TestHTTPClient]
    let token: String

    /// Starts them; nil (after printing why) when this machine has no PostgreSQL.
    static func start(count: Int) async throws -> Instances? {
        guard PostgresCluster.isAvailable(for: "the multi-instance tests") else { return nil }
        let url = try PostgresCluster.shared().makeDatabase()
        try await Tool.setUpField(["--postgres", url])
        var processes: [ChildProcess] = []
        var clients: [TestHTTPClient] = []
        do {
            for _ in 0..<count {
                let process = try Tool.start(
                    ["serve", "--postgres", url, "--port", "0", "--log-level", "warning"], environment: ProcessInfo.processInfo.environment,
                    output: .pipe)
                processes.append(process)
                clients.append(TestHTTPClient(baseURL: try await listeningURL(process)))
            }
        } catch {
            for process in processes { process.send(SIGKILL) }
            throw error
        }
        let token = try await clients[0].login("alice").accessToken
        return Instances(processes: processes, clients: clients, token: token)
    }

    /// The URL `cairn serve` prints once it listens.
    static func listeningURL(_ process: ChildProcess) async throws -> URL {
        let out = try #require(process.standardOutput)
        // The read waits for the child to start, off the concurrency pool: a blocked pool thread would starve the
        // servers of the tests running beside this one.
        let line = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            DispatchQueue.global().async {
                var line = ""
                while !line.contains("\n") {
                    let chunk = out.availableData
                    if chunk.isEmpty { break }
                    line += String(decoding: chunk, as: UTF8.self)
                }
                continuation.resume(returning: line)
            }
        }
        return try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }.flatMap { URL(string: String($0)) })
    }

    /// Stops every instance still running.
    func stop() {
        for process in processes where process.isRunning { process.send(SIGTERM) }
        for process in processes { process.waitUntilExit() }
    }

    /// Pushes a batch to `client`'s instance (fails on a non-200).
    func push(_ client: TestHTTPClient, _ operations: [SyncOperation]) async throws -> [OperationResult] {
        let reply = try await client.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: operations))
        guard reply.status == 200 else { throw CocoaError(.coderInvalidValue, userInfo: [NSDebugDescriptionErrorKey: "batch answered \(reply.status)"]) }
        return try reply.decode(BatchResponse.self).results
    }

    /// One page of `notes` from `client`'s instance.
    func pull(_ client: TestHTTPClient, since: String?, limit: Int) async throws -> ChangesPage {
        var path = "/v1/projects/field/collections/notes/changes?limit=\(limit)"
        if let since { path += "&since=" + (since.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? since) }
        return try await client.send(.GET, path, token: token).decode(ChangesPage.self)
    }
}

actor FinishedWriters {
    var count = 0
    func finish() { count += 1 }
}

extension Tool {
    /// Sets up, with `cairn admin` and the storage `storage` names (`--data DIR` or `--postgres URL`), the project
    /// `field` with the fixture's schema and the writer `alice` with the test password.
    static func setUpField(_ storage: [String]) async throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = folder.appendingPathComponent("schema.json")
        try Data(CairnJSON.encode(Fixture.schema)).write(to: schema)
        for arguments in [
            ["add-project", "field"], ["add-user", "alice", "--password", TestServer.password],
            ["grant", "alice", "--project", "field", "--role", "writer"], ["set-schema", "--project", "field", schema.path],
        ] {
            let output = try await run(["admin"] + storage + arguments)
            guard output.status == 0 else { throw CocoaError(.featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: output.stderr]) }
        }
    }
}
