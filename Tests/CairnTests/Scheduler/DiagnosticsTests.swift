import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Diagnostics: up to date, waiting, retrying, stuck")
struct DiagnosticsTests {
    @Test("the verdict follows the store's state, and the JSON report holds no record data or secrets")
    func verdicts() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice", network: nil)
            try await alice.sync()
            var report = try await alice.diagnostics()
            #expect(report.verdict == .upToDate, "\(report.explanation)")
            #expect(report.collections.map(\.name).contains("notes"))
            #expect(report.collections.first { $0.name == "notes" }?.firstPullCompleted == true)
            #expect(report.user == "alice")

            try alice.create("notes", id: "n-1", data: ["title": "secret-marker-title"])
            report = try await alice.diagnostics()
            #expect(report.verdict == .waiting)
            #expect(report.queueDepth == 1)
            #expect(report.oldestPendingAgeSeconds != nil)
            #expect(report.explanation.contains("1 change"))

            // The server's port closes: the sync fails and the store is retrying.
            await fixture.server.embedded.stopListening()
            await #expect(throws: CairnError.self) { try await alice.sync() }
            report = try await alice.diagnostics()
            #expect(report.verdict == .retrying, "\(report.explanation)")
            #expect(report.recentErrors.count >= 1)
            try await fixture.server.embedded.startListening()
            try await alice.sync()
            #expect(try await alice.diagnostics().verdict == .upToDate)

            // A change the server refuses (a file field naming no uploaded file) leaves the store stuck.
            try alice.create("notes", id: "n-2", data: ["title": "t", "photo": "no-such-file"])
            try await alice.sync()
            report = try await alice.diagnostics()
            #expect(report.verdict == .stuck, "\(report.explanation)")
            #expect(report.failedUploads.map(\.id) == ["n-2"])
            #expect(report.explanation.contains("refused"))
            let json = try report.jsonText()
            #expect(json.contains("\"stuck\""))
            #expect(!json.contains("secret-marker-title"))
            #expect(!json.contains(TestServer.password))
        }
    }
}
