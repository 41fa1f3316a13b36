import Logging
import ServiceLifecycle

/// Runs beside the listener when the storage has a ``NoticeChannel``: hands the other instances' notices to this
/// instance's event streams, reconnecting after a second when the channel fails, until graceful shutdown.
struct NoticeRelay: Service {
    let channel: any NoticeChannel
    let notifier: ChangeNotifier
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await channel.receive { [notifier] project, changes in await notifier.deliver(project: project, changes: changes) }
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("live notices from other instances stopped; reconnecting", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}
