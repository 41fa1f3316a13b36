import Foundation
import ServiceLifecycle

/// Runs the purge on a timer while the server runs, resumes schema migrations a restart cut short, and ends
/// live-notice streams at shutdown so open event connections do not hold the server up.
struct MaintenanceService: Service {
    let server: SyncServer

    func run() async throws {
        async let resumed: Void = cancelWhenGracefulShutdown { await server.resumeMigrations() }
        let interval = server.configuration.purgeInterval
        if interval > 0 {
            await purgeEvery(interval)
        } else {
            // No timer: just wait for shutdown.
            try? await gracefulShutdown()
        }
        await server.notifier.finishAll()
        await resumed
    }

    /// Purges every `interval` seconds on the server's timers, until graceful shutdown.
    private func purgeEvery(_ interval: TimeInterval) async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await server.timers.sleep(for: .seconds(interval))
                } catch {
                    return
                }
                do {
                    let report = try await server.purgeNow()
                    server.logger.info("purged", metadata: [
                        "tombstones": .stringConvertible(report.tombstones), "operations": .stringConvertible(report.operations),
                        "tokens": .stringConvertible(report.tokens), "files": .stringConvertible(report.files),
                    ])
                } catch {
                    server.logger.error("purge failed", metadata: ["error": .string("\(type(of: error))")])
                }
            }
        }
    }
}
