import Logging
import ServiceLifecycle

/// Runs beside the listener when the storage has a ``NoticeChannel``: hands the other instances' notices to this
/// instance's event streams, reconnecting ``reconnectDelay`` after the channel fails, until graceful shutdown.
struct NoticeRelay: Service {
    let channel: any NoticeChannel
    let notifier: ChangeNotifier
    let logger: Logger
    /// What the wait before reconnecting runs on (the server's timers).
    let timers: any Clock<Duration>
    /// How long to wait before reconnecting a failed channel.
    static let reconnectDelay = Duration.seconds(1)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    // Shutdown does not wait for a channel that does not hear its cancellation (a connection the
                    // database's restart cut).
                    let listening = Task { [channel, notifier] in
                        try await channel.receive { project, changes in await notifier.deliver(project: project, changes: changes) }
                    }
                    try await Abandonable.value(of: listening)
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("live notices from other instances stopped; reconnecting", metadata: ["error": "\(error)"])
                    try? await timers.sleep(for: Self.reconnectDelay)
                }
            }
        }
    }
}
