import Foundation
import ServiceLifecycle

/// Runs the purge on a timer while the server runs.
struct PurgeService: Service {
    let server: SyncServer

    func run() async throws {
        let interval = server.configuration.purgeInterval
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(interval))
            } catch {
                return
            }
            do {
                let report = try await server.purgeNow()
                server.logger.info("purged", metadata: [
                    "tombstones": .stringConvertible(report.tombstones), "operations": .stringConvertible(report.operations),
                    "tokens": .stringConvertible(report.tokens),
                ])
            } catch {
                server.logger.error("purge failed", metadata: ["error": .string("\(type(of: error))")])
            }
        }
    }
}
