import Cairn
import CairnProtocol
import Foundation
import GRDB

/// `cairn sync --watch`: runs the client's scheduler, prints each sync as it ends, tells the scheduler when another
/// process (`cairn put`, `cairn delete`) changed the store file, and stops cleanly on Ctrl-C or SIGTERM.
struct SyncWatch {
    let client: CairnClient
    let store: String

    func run() async throws {
        let (stop, stopper) = AsyncStream<Void>.makeStream()
        let signals = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { stopper.yield() }
            source.resume()
            return source
        }
        defer { for source in signals { source.cancel() } }

        Self.say("watching \(store): syncing after local writes and server notices; Ctrl-C stops")
        let client = self.client
        let events = await client.events()
        let printer = Task {
            for await event in events {
                let time = RFC3339.string(from: Date())
                switch event {
                case .completed(let summary):
                    let status = await client.status()
                    Self.say("\(time) synced: pushed \(summary.pushed), pulled \(summary.pulled), conflicts \(summary.conflicts), "
                          + "failed \(summary.failed); pending \(status.pendingUploads)")
                case .failed(let error):
                    Self.say("\(time) sync failed: \(error.code.rawValue): \(error.message) (retrying with backoff)")
                default:
                    break
                }
            }
        }
        let watcher = Task { await Self.watchFile(store, client: client) }
        let scheduler = Task { await client.run() }
        var iterator = stop.makeAsyncIterator()
        _ = await iterator.next()
        scheduler.cancel()
        watcher.cancel()
        await scheduler.value
        printer.cancel()
        let status = await client.status()
        Self.say("stopped; pending \(status.pendingUploads), failed uploads \(status.failedUploads)")
    }

    /// Notices commits by other processes to the store file (SQLite's `data_version`, read twice a second from a
    /// connection of its own: a local file read, no network).
    private static func watchFile(_ path: String, client: CairnClient) async {
        var configuration = Configuration()
        configuration.readonly = true
        guard let database = try? DatabaseQueue(path: path, configuration: configuration) else { return }
        var last = dataVersion(database)
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(500))
            let now = dataVersion(database)
            // The client's own syncs commit too: only a change that left something to upload is another process's.
            if now != last {
                last = now
                if client.hasPendingUpload { client.storeDidChangeExternally() }
            }
        }
    }

    private static func dataVersion(_ database: DatabaseQueue) -> Int? {
        try? database.read { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
    }

    /// Writes a line at once (`print` buffers its output when it goes into a pipe or a file, until the process ends).
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
