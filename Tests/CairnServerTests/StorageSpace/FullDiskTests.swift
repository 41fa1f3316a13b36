import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Logging
import Synchronization
import Testing

/// The server on a real small filesystem (a tmpfs the test mounts; skipped with the reason printed where mounting is
/// not allowed), filled on purpose: writes answer `507 storage_full`, `/ready` answers `503`, a metric counts, the log
/// says it once, nothing acknowledged is lost, and freeing space lets writes through again without a restart. Always
/// on SQLite: the disk is the server's own.
@Suite("A full disk on the server", .serialized)
struct FullDiskTests {
    /// The server's log lines, kept.
    final class Lines: LogHandler, @unchecked Sendable {
        let lines = Mutex<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.withLock { $0.append("\(event.level) \(event.message)") } }
        func count(containing text: String) -> Int { lines.withLock { $0.filter { $0.contains(text) }.count } }
    }

    static func batch(_ ids: Range<Int>, prefix: String) -> BatchRequest {
        BatchRequest(operations: ids.map {
            SyncOperation(opId: newOpID(), collection: "notes", id: "\(prefix)-\($0)", op: .create, data: ["title": .string(String(repeating: "x", count: 2000))])
        })
    }

    /// Pushes batches of 50 until two are refused (each commits whole or is refused whole); returns the ids of the
    /// batches acknowledged and the refusals.
    static func pushUntilRefused(_ fixture: Fixture, prefix: String = "full") async throws -> (acknowledged: [String], refused: [HTTPReply]) {
        var acknowledged: [String] = []
        var refused: [HTTPReply] = []
        var round = 0
        while refused.count < 2 {
            round += 1
            let reply = try await fixture.http.send(
                .POST, "/v1/projects/field/batch", token: fixture.tokens["alice"], value: batch(0..<50, prefix: "\(prefix)-\(round)"))
            if reply.status == 200 {
                acknowledged += (0..<50).map { "\(prefix)-\(round)-\($0)" }
            } else {
                refused.append(reply)
            }
        }
        return (acknowledged, refused)
    }

    @Test("writes on a full disk answer 507 storage_full with Retry-After while /ready answers 503 and a metric counts; the log says it once; freed space lets writes through without a restart, and nothing acknowledged is lost")
    func fullDisk() async throws {
        guard let disk = SmallFilesystem.mount(megabytes: 24, for: "the server's full-disk test") else { return }
        defer { disk.unmount() }
        let log = Lines()
        let fixture = try await Fixture.start(
            dataDirectory: disk.url.appendingPathComponent("data"), logger: Logger(label: "cairn.test") { _ in log }
        ) { $0.postgresURL = nil }
        try await withCleanup({ await fixture.stop() }) {
            let path = "/v1/projects/field/batch"
            var acknowledged: [String] = []
            let first = try await fixture.http.send(.POST, path, token: fixture.tokens["alice"], value: Self.batch(0..<50, prefix: "before"))
            #expect(first.status == 200)
            acknowledged += (0..<50).map { "before-\($0)" }

            try disk.fill()
            let (written, refused) = try await Self.pushUntilRefused(fixture)
            acknowledged += written
            for reply in refused {
                #expect(reply.status == 507)
                #expect(try reply.decode(ErrorEnvelope.self).error.code == .storageFull)
                #expect(reply.header("Retry-After") != nil)
            }
            let ready = try await fixture.http.send(.GET, "/ready")
            #expect(ready.status == 503)
            #expect(try ready.decode(ErrorEnvelope.self).error.code == .storageFull)
            let metrics = String(decoding: try await fixture.http.send(.GET, "/metrics").body, as: UTF8.self)
            #expect(metrics.contains("cairn_storage_full 1"))
            #expect(metrics.contains("cairn_storage_full_refusals_total"))
            #expect(log.count(containing: "storage is full") == 1)

            // Space returns: /ready says so, and writes go through, with no restart.
            disk.free()
            #expect(try await fixture.http.send(.GET, "/ready").status == 200)
            let after = try await fixture.http.send(.POST, path, token: fixture.tokens["alice"], value: Self.batch(0..<50, prefix: "after"))
            #expect(after.status == 200)
            acknowledged += (0..<50).map { "after-\($0)" }
            let notes = Set(try await fixture.pullAll("ada", "notes").changes.map(\.id))
            #expect(Set(acknowledged).isSubset(of: notes))
            #expect(log.count(containing: "storage has room again") == 1)
            let cleared = String(decoding: try await fixture.http.send(.GET, "/metrics").body, as: UTF8.self)
            #expect(cleared.contains("cairn_storage_full 0"))
        }
    }

    @Test("a file upload that meets a full disk answers 507 and keeps none of its bytes; once space returns it uploads from where it was")
    func fullDiskUpload() async throws {
        guard let disk = SmallFilesystem.mount(megabytes: 24, for: "the server's full-disk upload test") else { return }
        defer { disk.unmount() }
        let fixture = try await Fixture.start(dataDirectory: disk.url.appendingPathComponent("data")) { $0.postgresURL = nil }
        try await withCleanup({ await fixture.stop() }) {
            let bytes = Data((0..<(6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            let file = try await fixture.newFile(size: bytes.count)
            let half = bytes.count / 2
            #expect(try await fixture.put(file, bytes.prefix(half), range: "bytes 0-\(half - 1)/\(bytes.count)").status == 200)
            // Room for a little, not for the rest.
            try disk.fill(leaving: 1 << 20)
            let refused = try await fixture.put(file, bytes.suffix(from: half), range: "bytes \(half)-\(bytes.count - 1)/\(bytes.count)")
            #expect(refused.status == 507)
            #expect(try refused.decode(ErrorEnvelope.self).error.code == .storageFull)
            // None of the refused request's bytes stay: the upload goes on from the first half.
            #expect(try await fixture.offset(file) == Int64(half))
            #expect(try await fixture.server.server.blobs.size(project: Fixture.project, id: file.id) == Int64(half))
            disk.free()
            #expect(try await fixture.put(file, bytes.suffix(from: half), range: "bytes \(half)-\(bytes.count - 1)/\(bytes.count)").status == 200)
            #expect(try await fixture.complete(file).status == 200)
            let download = try await fixture.http.send(.GET, "\(Fixture.files)/\(file.id)/content", token: fixture.tokens["alice"])
            #expect(download.body == bytes)
        }
    }
}
