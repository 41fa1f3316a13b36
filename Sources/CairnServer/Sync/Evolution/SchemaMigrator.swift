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
/// let migrated = try await SchemaMigrator(storage: storage, evolution: evolution, clock: clock).run(project: "field")
/// ```
struct SchemaMigrator: Sendable {
    let storage: any ServerStorage
    let evolution: SchemaEvolution
    let clock: any WallClock
    /// Records per page.
    var pageSize = 500
    /// Told of each page's changed collections, for live notices.
    var changed: @Sendable (_ project: String, _ changes: [String: Int64]) async -> Void = { _, _ in }

    /// Who the rewritten records say changed them.
    static let user = "cairn"

    /// Runs the unfinished migrations of `project` to the end; returns how many records it rewrote.
    @discardableResult
    func run(project: String) async throws -> Int64 {
        guard let current = try await storage.schema(project: project) else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
        let versions = try await storage.schemaVersions(project: project)
        let unfinished = versions.filter { $0.migration.state == .pending || $0.migration.state == .running }
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
        let now = clock.now()
        let (count, changes) = try await storage.withProjectWriteTransaction(project: project) { transaction in
            let snapshot = try await transaction.read(TransactionReads(records: [collection.name: ids]))
            var writer = RecordWriter(transaction, head: snapshot.headVersion, user: Self.user, now: now, schema: schema)
            var count: Int64 = 0
            for row in snapshot.records[collection.name] ?? [] where !row.deleted && row.version <= through {
                let state = try StoredRecordState(row)
                var data = state.record.data
                var fieldVersions = state.fieldVersions
                for step in steps {
                    step.apply(to: &data)
                    step.carry(&fieldVersions)
                }
                guard data != state.record.data else { continue }
                _ = try await writer.write(collection: collection.name, id: row.id, data: data, previous: state, fieldVersions: fieldVersions)
                count += 1
            }
            try await writer.finish()
            return .commit((count, writer.changedCollections))
        }
        if !changes.isEmpty { await changed(project, changes) }
        return count
    }
}

extension DataStep {
    /// Moves the field versions as the step moves the fields, so a migration is not a change of the fields for the
    /// `merge-fields` policy: a renamed field keeps the version its value last changed at.
    func carry(_ fieldVersions: inout [String: Int64]) {
        switch kind {
        case .rename(let from, let to):
            if let version = fieldVersions.removeValue(forKey: from), fieldVersions[to] == nil { fieldVersions[to] = version }
        case .drop(let field):
            fieldVersions[field] = nil
        case .convert, .fill:
            return
        }
    }
}
