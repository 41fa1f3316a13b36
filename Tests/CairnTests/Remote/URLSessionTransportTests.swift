import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// What ``URLSessionTransport`` adds over URLSession, checked on it whatever transport the suite's clients use: a
/// server that accepts and never answers, cancellation, and upload progress as the bytes go.
@Suite("URLSessionTransport", .timeLimit(.minutes(20)))
struct URLSessionTransportTests {
    /// A server behind a proxy whose next connection is accepted and never answered.
    static func silentServer() async throws -> (Fixture, FaultProxy) {
        let fixture = try await Fixture.start()
        let proxy = try await FaultProxy.start(upstreamPort: fixture.server.port, faultRate: 0, seed: 1)
        proxy.script([.blackhole])
        return (fixture, proxy)
    }

    @Test("a request the server accepts but never answers is a live server's: it ends with timed_out, after its own timeout")
    func silentServer() async throws {
        let (fixture, proxy) = try await Self.silentServer()
        try await withCleanup({ await proxy.stop(); await fixture.stop() }) {
            let transport = URLSessionTransport(configuration: .ephemeral, connectTimeout: .milliseconds(400))
            let error = await #expect(throws: CairnError.self) {
                _ = try await transport.send(
                    TransportRequest(method: "GET", url: proxy.baseURL.appendingPathComponent("health"), timeout: .seconds(2)))
            }
            // The proxy took the connection, so the server is reachable: not network_unavailable at the connect timeout.
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.isRetryable == true)
        }
    }

    #if canImport(Glibc)
    @Test("a server that takes longer than the connect timeout to start answering is waited for, since its address takes connections")
    func slowServer() async throws {
        // The server answers its first connection only once a second one came: the transport's check that the
        // address is alive, made after half the connect timeout with nothing heard.
        let server = try SlowAnsweringServer()
        defer { server.close() }
        let transport = URLSessionTransport(configuration: .ephemeral, connectTimeout: .milliseconds(300))
        // A request timeout no busy machine reaches: on a suite that keeps both cores busy the transport's check may
        // run late, and only a failure as unreachable (the defect) or a hang (the suite's time limit) fails this.
        let response = try await transport.send(
            TransportRequest(method: "GET", url: server.url.appendingPathComponent("health"), timeout: .seconds(3600)))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "slow")
    }
    #endif

    @Test("cancelling the caller's task cancels the request at once")
    func cancellation() async throws {
        let (fixture, proxy) = try await Self.silentServer()
        try await withCleanup({ await proxy.stop(); await fixture.stop() }) {
            let transport = URLSessionTransport(configuration: .ephemeral, connectTimeout: .seconds(60))
            let request = Task { try await transport.send(TransportRequest(method: "GET", url: proxy.baseURL.appendingPathComponent("health"))) }
            try await Task.sleep(for: .milliseconds(200))
            request.cancel()
            let error = await #expect(throws: CairnError.self) { _ = try await request.value }
            #expect(error?.code == .cancelled)
            // Far sooner than the 60 s connect timeout: the cancellation ended it.
        }
    }

    @Test("an upload reports its progress as the bytes go, and a slice after an offset sends exactly its bytes")
    func uploadProgress() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let (source, hash) = try TestFiles.large(megabytes: 24)
            defer { try? FileManager.default.removeItem(at: source) }
            // A connect timeout no busy machine reaches: this test is about progress, not about timeouts.
            let alice = try await fixture.client("alice", network: SwitchableTransport(inner: URLSessionTransport(connectTimeout: .seconds(120))))
            let updates = await alice.statusUpdates()
            let seen = Task {
                var sent: Set<Int64> = []
                for await status in updates {
                    for transfer in status.fileTransfers.values where transfer.direction == .upload { sent.insert(transfer.bytes) }
                    if status.pendingFiles == 0, status.lastUpload != nil { break }
                }
                return sent
            }
            let localID = try alice.files.upload(from: source, name: "survey.bin")
            await alice.files.waitForUploads()
            let job = try #require(try alice.files.upload(localID))
            #expect(job.state == .completed, "\(String(describing: job.error))")
            #expect(try await alice.files.metadata(try #require(job.serverID)).sha256 == hash)
            seen.cancel()
            let sent = await seen.value
            #expect(sent.filter { $0 > 0 && $0 < 24 << 20 }.count >= 3, "progress while sending: \(sent.sorted())")

            // A slice that starts inside its file goes as a temporary copy of its bytes.
            let body = try CairnJSON.encode(LoginRequest(username: "alice", password: TestServer.password))
            let file = TestScratch.url("cairn-slice", suffix: ".bin")
            defer { try? FileManager.default.removeItem(at: file) }
            try (Data("not json".utf8) + body + Data("tail".utf8)).write(to: file)
            var login = TransportRequest(
                method: "POST", url: fixture.server.baseURL.appendingPathComponent("v1/auth/login"), headers: [("Content-Type", "application/json")])
            login.bodyFile = TransportFileSlice(url: file, offset: 8, length: Int64(body.count))
            #expect(try await URLSessionTransport().send(login).status == 200)
        }
    }
}
