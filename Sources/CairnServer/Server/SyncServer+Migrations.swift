import CairnProtocol
import Foundation

extension SyncServer {
    /// Runs to the end the migrations of stored records that a restart cut short, project by project, with live
    /// notices for the records rewritten (until then reads and writes bring each record they touch to the new shape).
    func resumeMigrations() async {
        var after: String?
        do {
            while true {
                let page = try await storage.projects(after: after, limit: 100)
                for project in page {
                    try Task.checkCancellation()
                    let versions = try await storage.schemaVersions(project: project.name)
                    guard versions.contains(where: \.migration.isUnfinished) else { continue }
                    let migrated = try await admin.migrate(project: project.name)
                    logger.info("schema migration resumed", metadata: ["project": .string(project.name), "migrated": .stringConvertible(migrated)])
                }
                guard page.count == 100, let last = page.last else { return }
                after = last.name
            }
        } catch is CancellationError {
            return
        } catch {
            logger.error("schema migration failed", metadata: ["error": .string(storage.describe(error))])
        }
    }
}
