import CairnProtocol
import Foundation

/// Applies declared migration steps to a project's stored records, in pages, while writers keep pushing: each page
/// is rewritten in one project write transaction, so it commits between batches, and every record rewritten gets a
/// new version, reaching devices as an ordinary change. Records at or below the head version the migration started
/// from are its work; a record written since (by a batch, which brings it to the current shape itself) is left
/// alone, so each record is migrated at most once. The steps are idempotent, so a migration cut short starts its
/// pass again and only rewrites what is left.
///
/// ```swift
/// let migrated = try await SchemaMigrator(storage: storage, evolution: evolution, clock: clock, commits: commits).run(project: "field")
/// ```
struct SchemaMigrator: Sendable {
    let storage: any ServerStorage
    let evolution: SchemaEvolution
    let clock: any WallClock
    /// How each page commits (and is announced to live listeners).
    let commits: RecordCommits
    /// Records per page.
    var pageSize = 500

    /// Who the rewritten records say changed them.
    static let user = "cairn"

    /// Runs the unfinished migrations of `project` to the end; returns how many records it rewrote.
    @discardableResult
    func run(project: String) async throws -> Int64 {
        guard let current = try await storage.schema(project: project) else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
        let versions = try await storage.schemaVersions(project: project)
        let unfinished = versions.filter(\.migration.isUnfinished)
        guard let first = unfinished.first else { return 0 }
        let history = SchemaHistory(current: current, versions: versions)
        let steps = history.steps(after: first.schema.number - 1)
        let number = first.schema.number
        var progress = first.migration
        if progress.through == nil {
            progress.through = try await storage.withProjectWriteTransaction(project: project) { .commit(try await $0.headVersion()) }
        }
        progress.state = .running
        progress.cursor = 0
        try await storage.setMigrationProgress(project: project, number: number, progress)
        let through = progress.through ?? 0
        var total: Int64 = 0
        for name in Set(steps.map(\.collection)).sorted() {
            guard let collection = current.collection(named: name) else { continue }
            let collectionSteps = steps.filter { $0.collection == name }
            var cursor: Int64 = 0
            while true {
                try Task.checkCancellation()
                let rows = try await storage.feedRange(
                    project: project, collection: collection, since: cursor, snapshotHigh: through, limit: pageSize, filter: nil)
                let page = rows.rows.prefix { $0.version <= through }
                if !page.isEmpty {
                    let migrated = try await migrate(ids: page.map(\.id), of: collection, steps: collectionSteps, through: through, project: project, schema: current)
                    total += migrated
                    cursor = page.last?.version ?? cursor
                    progress.cursor = cursor
                    progress.migrated += migrated
                    try await storage.setMigrationProgress(project: project, number: number, progress)
                }
                if page.count < rows.rows.count || !rows.hasMore { break }
            }
        }
        progress.state = .done
        for version in unfinished {
            var done = version.schema.number == number ? progress : version.migration
            done.state = .done
            try await storage.setMigrationProgress(project: project, number: version.schema.number, done)
        }
        evolution.forget(project: project)
        return total
    }

    /// Rewrites the records among `ids` still at or below `through` in one write transaction; returns how many changed.
    private func migrate(
        ids: [String], of collection: CollectionSchema, steps: [DataStep], through: Int64, project: String, schema: Schema
    ) async throws -> Int64 {
        try await commits.write(
            project: project, reads: TransactionReads(records: [collection.name: ids]), user: Self.user, now: clock.now(), schema: schema
        ) { snapshot, writer -> TransactionEnd<Int64> in
            var count: Int64 = 0
            for row in snapshot.records[collection.name] ?? [] where !row.deleted && row.version <= through {
                let state = try StoredRecordState(row)
                let migrated = state.applying(steps)
                guard migrated.record.data != state.record.data else { continue }
                _ = try await writer.write(
                    collection: collection.name, id: row.id, data: migrated.record.data, previous: state, fieldVersions: migrated.fieldVersions)
                count += 1
            }
            return .commit(count)
        }.value
    }
}
