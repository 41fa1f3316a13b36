import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

extension MemoryHeavy {
@Suite("Files: large uploads over a bad network", .serialized)
struct LargeFileTests {
    @Test("a 200 MB upload cut several times resumes from the server's offset and completes with the right SHA-256")
    func resumesAfterCuts() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let proxy = try await FaultProxy.start(upstreamPort: fixture.server.port, faultRate: 0, seed: 7)
            try await withCleanup({ await proxy.stop() }) {
                // Every connection breaks after 60 MB of requests: the upload loses its connection three times.
                proxy.script(Array(repeating: .cutRequest(after: 60 << 20), count: 50))
                let (source, hash) = try TestFiles.large(megabytes: 200)
                defer { try? FileManager.default.removeItem(at: source) }
                let alice = try await fixture.client("alice", network: nil) { $0.serverURL = proxy.baseURL }
                let before = TestFiles.peakResidentBytes()
                let localID = try alice.files.upload(from: source, name: "survey.bin")
                await alice.files.waitForUploads()
                let after = TestFiles.peakResidentBytes()
                let job = try #require(try alice.files.upload(localID))
                #expect(job.state == .completed, "\(String(describing: job.error))")
                let metadata = try await alice.files.metadata(try #require(job.serverID))
                #expect(metadata.sha256 == hash)
                #expect(metadata.size == 200 << 20)
                // Each connection carries at most 60 MB: 200 MB needed at least four, so the upload was cut at least three times.
                let connections = proxy.connections
                #expect(connections >= 4)
                if let before, let after {
                    // Client and server share this process: neither may hold the file in memory (that alone would add 200 MB).
                    // The peak is the whole process's, and other tests run beside this one, so the bound leaves room for them.
                    print("200 MB upload over \(connections) connections of at most 60 MB each; peak resident memory grew \((after - before) >> 20) MB (client and server together)")
                    #expect(after - before < 200 << 20)
                }
            }
        }
    }
}
}
