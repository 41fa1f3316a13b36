import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

@Suite("File upload progress")
struct FileProgressTests {
    @Test("an upload's progress rises from 0 to 1 while its one request sends the bytes, on the suite's transport")
    func risesDuringTheRequest() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let source = try TestFiles.make(8 << 20)
            let fractions = Mutex<[Double]>([])
            let updates = await alice.statusUpdates()
            let watcher = Task {
                for await status in updates {
                    for transfer in status.fileTransfers.values where transfer.direction == .upload {
                        fractions.withLock { $0.append(transfer.fraction) }
                    }
                }
            }
            defer { watcher.cancel() }
            let localID = try alice.files.upload(from: source, name: "survey.bin")
            await alice.files.waitForUploads()
            #expect(try alice.files.upload(localID)?.state == .completed)
            try await Task.sleep(for: .milliseconds(100))
            // An unencrypted file goes in one request: values between 0 and 1 were reported while it was under way.
            let seen = fractions.withLock { $0 }
            let between = Set(seen.filter { $0 > 0 && $0 < 1 })
            #expect(between.count >= 3, "\(seen.count) updates: \(seen.prefix(20))")
            #expect(seen == seen.sorted(), "progress only rises")
        }
    }
}
