import Testing

@testable import Cairn

/// File transfers show in the status only while they run: reports run in tasks of their own, and one that arrives
/// late must neither move progress back nor bring back a transfer that ended.
@Suite("File transfers in the status")
struct TransferProgressTests {
    static func download(_ bytes: Int64) -> FileTransfer {
        FileTransfer(direction: .download, name: "f1", bytes: bytes, totalBytes: 100)
    }

    @Test("a transfer shows from its start to its end; reports before its start or after its end show nothing")
    func showsOnlyWhileRunning() async {
        let center = StatusCenter()
        let progress = TransferProgress(status: center)
        await progress.report("f1", Self.download(10))
        #expect(await center.status.fileTransfers["f1"] == nil, "a report before the transfer started")

        progress.begin("f1")
        await progress.report("f1", Self.download(40))
        #expect(await center.status.fileTransfers["f1"]?.bytes == 40)
        await progress.report("f1", Self.download(20))
        #expect(await center.status.fileTransfers["f1"]?.bytes == 40, "a late report does not move progress back")

        await progress.end("f1")
        #expect(await center.status.fileTransfers["f1"] == nil)
        await progress.report("f1", Self.download(90))
        #expect(await center.status.fileTransfers["f1"] == nil, "a report after the transfer ended does not show it again")

        // The next transfer of the same file shows again.
        progress.begin("f1")
        await progress.report("f1", Self.download(5))
        #expect(await center.status.fileTransfers["f1"]?.bytes == 5)
    }

    @Test("reports racing the end never leave an ended transfer shown")
    func racingReports() async {
        for round in 0..<50 {
            let center = StatusCenter()
            let progress = TransferProgress(status: center)
            let id = "f\(round)"
            progress.begin(id)
            await withTaskGroup(of: Void.self) { group in
                for bytes in stride(from: Int64(1), through: 100, by: 3) {
                    group.addTask { await progress.report(id, FileTransfer(direction: .upload, name: id, bytes: bytes, totalBytes: 100)) }
                }
                group.addTask { await progress.end(id) }
            }
            #expect(await center.status.fileTransfers[id] == nil, "round \(round)")
        }
    }
}
