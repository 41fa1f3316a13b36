import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server whose disk fills: the Cairn database lives in a tablespace on a real small filesystem (a tmpfs
/// the test mounts, given to the postgres user; skipped with the reason printed where mounting or PostgreSQL is not
/// available), which is then filled on purpose.
@Suite("A full disk under PostgreSQL", .serialized)
struct FullTablespaceTests {
    @Test("writes on a PostgreSQL whose tablespace is full answer 503 unavailable with Retry-After and a metric counts them; freed space lets writes through without a restart, and nothing acknowledged is lost")
    func fullTablespace() async throws {
        guard PostgresCluster.isAvailable(for: "the PostgreSQL full-disk test") else { return }
        guard let disk = SmallFilesystem.mount(megabytes: 24, for: "the PostgreSQL full-disk test") else { return }
        defer { disk.unmount() }
        let tablespace = disk.url.appendingPathComponent("tablespace")
        try FileManager.default.createDirectory(at: tablespace, withIntermediateDirectories: true)
        if getuid() == 0, let account = getpwnam("postgres") {
            #expect(chown(disk.url.path, account.pointee.pw_uid, account.pointee.pw_gid) == 0)
            #expect(chown(tablespace.path, account.pointee.pw_uid, account.pointee.pw_gid) == 0)
        }
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        _ = try cluster.psql("CREATE TABLESPACE small LOCATION '\(tablespace.path)'", database: cluster.url)
        _ = try cluster.psql("CREATE DATABASE on_small TABLESPACE small", database: cluster.url)
        let url = "postgres://cairn@127.0.0.1:\(cluster.port)/on_small?sslmode=disable"
        let fixture = try await Fixture.start { $0.postgresURL = url }
        try await withCleanup({ await fixture.stop() }) {
            let path = "/v1/projects/field/batch"
            var acknowledged: [String] = []
            let first = try await fixture.http.send(.POST, path, token: fixture.tokens["alice"], value: FullDiskTests.batch(0..<50, prefix: "before"))
            #expect(first.status == 200)
            acknowledged += (0..<50).map { "before-\($0)" }

            try disk.fill()
            let (written, refused) = try await FullDiskTests.pushUntilRefused(fixture)
            acknowledged += written
            for reply in refused {
                #expect(reply.status == 503)
                #expect(try reply.decode(ErrorEnvelope.self).error.code == .unavailable)
                #expect(reply.header("Retry-After") != nil)
            }
            let metrics = String(decoding: try await fixture.http.send(.GET, "/metrics").body, as: UTF8.self)
            let counted = metrics.split(separator: "\n").filter { $0.hasPrefix("cairn_storage_full_refusals_total") }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
            #expect(counted >= 2, "\(metrics.split(separator: "\n").filter { $0.contains("storage_full") })")

            // Space returns: writes go through, with no restart.
            disk.free()
            let after = try await fixture.http.send(.POST, path, token: fixture.tokens["alice"], value: FullDiskTests.batch(0..<50, prefix: "after"))
            #expect(after.status == 200)
            acknowledged += (0..<50).map { "after-\($0)" }
            let notes = Set(try await fixture.pullAll("ada", "notes").changes.map(\.id))
            #expect(Set(acknowledged).isSubset(of: notes))
        }
    }
}
