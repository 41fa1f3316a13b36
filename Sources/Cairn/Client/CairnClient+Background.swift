import CairnProtocol
import Foundation

extension CairnClient {
    /// Syncs every `interval`; after a failure it retries with the configured backoff (capped at `interval`) rather
    /// than waiting a whole interval. Runs until ``stopBackgroundTasks()`` or sign-out, and keeps the client alive
    /// meanwhile.
    public func startAutoSync(every interval: Duration) {
        startBackgroundTask("timer") { client in
            var failures = 0
            while !Task.isCancelled {
                do {
                    try await client.sync()
                    failures = 0
                    try await client.configuration.clock.sleep(for: interval)
                } catch is CancellationError {
                    return
                } catch {
                    failures += 1
                    let delay = client.configuration.retry.delay(beforeAttempt: failures + 1)
                    try? await client.configuration.clock.sleep(for: min(delay, interval))
                }
            }
        }
    }

    /// Listens to the server's live notices and pulls a collection as soon as it changes; reconnects with backoff.
    /// Each time the stream (re)connects it pulls once, for the changes made while it was not listening.
    public func startLiveUpdates() {
        startBackgroundTask("live") { client in
            var failures = 0
            while !Task.isCancelled {
                do {
                    let chunks = try await client.api.events()
                    failures = 0
                    _ = try? await client.pull()
                    var buffer = ""
                    for try await chunk in chunks {
                        buffer += String(decoding: chunk, as: UTF8.self)
                        while let end = buffer.range(of: "\n\n") {
                            let event = String(buffer[..<end.lowerBound])
                            buffer.removeSubrange(..<end.upperBound)
                            for line in event.split(separator: "\n") where line.hasPrefix("data:") {
                                let json = line.dropFirst(5).trimmingCharacters(in: .whitespaces)
                                if let notice = try? CairnJSON.decode(ChangeNotice.self, from: Array(json.utf8)),
                                    client.schema?.collection(named: notice.collection) != nil
                                {
                                    _ = try? await client.pull([notice.collection])
                                }
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                }
                failures += 1
                try? await client.configuration.clock.sleep(for: client.configuration.retry.delay(beforeAttempt: failures + 1))
            }
        }
    }

    /// Stops the timer and live updates.
    public func stopBackgroundTasks() {
        let tasks = background.withLock { tasks -> [Task<Void, Never>] in
            defer { tasks.removeAll() }
            return Array(tasks.values)
        }
        for task in tasks { task.cancel() }
    }

    private func startBackgroundTask(_ name: String, _ body: @escaping @Sendable (CairnClient) async -> Void) {
        let task = Task { [weak self] in
            guard let self else { return }
            await body(self)
        }
        background.withLock { tasks in
            tasks[name]?.cancel()
            tasks[name] = task
        }
    }
}
