import Cairn
import CairnProtocol
import Foundation

/// `cairn sync --watch`: runs the client's scheduler, prints each sync as it ends, and stops cleanly on Ctrl-C or
/// SIGTERM. The SDK's scheduler notices what other processes (`cairn put`, `cairn delete`) write to the store file,
/// and stands by while another process syncs it.
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
        // Says when another process sharing the store syncs it, and when this one takes over.
        let updates = await client.statusUpdates()
        let standby = Task {
            var standing: Bool?
            for await status in updates where status.scheduler.phase != .notRunning {
                let now = status.scheduler.phase == .otherProcess
                if now != standing, standing != nil || now {
                    Self.say(now ? "another process syncs \(store); standing by" : "this process syncs \(store)")
                }
                standing = now
            }
        }
        let scheduler = Task { await client.run() }
        var iterator = stop.makeAsyncIterator()
        _ = await iterator.next()
        scheduler.cancel()
        await scheduler.value
        printer.cancel()
        standby.cancel()
        let status = await client.status()
        Self.say("stopped; pending \(status.pendingUploads), failed uploads \(status.failedUploads)")
    }

    /// Writes a line at once (`print` buffers its output when it goes into a pipe or a file, until the process ends).
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
