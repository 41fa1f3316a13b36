import CairnProtocol
import CairnSQL
import Foundation
import GRDB

/// The rules of partial sync, over the local store's tables: which records each download query holds, and when a
/// record leaves the device (no query holds it and it has no local change). A pulled page of a query goes through the
/// store's one apply path (``LocalStore/apply(_:to:)``), like every page.
///
/// ```swift
/// let queries = DownloadQueryStore(store: store)
/// try queries.create(name: "open", collection: "notes", filter: .condition("done", .eq, false))
/// ```
struct DownloadQueryStore: Sendable {
    let store: LocalStore
    var table: DownloadQueryTable { store.downloadQueries }

    /// The prefix of queries made from ``CairnConfiguration/downloadFilters``; apps cannot use it.
    static let configurationPrefix = "cairn.configuration."

    // MARK: Managing queries

    /// Creates a query and marks its collection as pulled through queries only.
    func create(name: String, collection: String, filter: Filter, prefetchFiles: Bool = false, reservedName: Bool = false) throws {
        try check(name: name, reservedName: reservedName)
        let text = try checked(filter, collection: collection)
        try store.writer.write { db in
            guard try table.insert(db, name: name, collection: collection, filterText: text, prefetchFiles: prefetchFiles) else {
                throw CairnError(.alreadyExists, "a download query named \"\(name)\" exists; update or delete it")
            }
            if try table.markPartial(db, collection) { try store.collectionStates.markNeedsPull(db, collection) }
        }
    }

    /// Changes a query's filter. When the query has held its records since a completed pull, the records that no
    /// longer match leave now (unless another query holds them or they have local changes), and the next pull
    /// downloads only the records that newly match; otherwise the query starts over.
    func update(name: String, filter: Filter) throws {
        try store.writer.write { db in
            guard let state = try table.state(db, name) else { throw CairnError(.notFound, "no download query is named \"\(name)\"") }
            let text = try checked(filter, collection: state.collection)
            guard text != state.filterText else { return }
            guard state.firstPullDone, !state.resyncing, state.cursor != nil, let collection = try? store.table(state.collection) else {
                try table.setFilter(db, name, filterText: text, heldFilterText: nil)
                return
            }
            // The members whose local row no longer matches leave the query.
            let unmatched = try LocalQuerySQL(Query(state.collection, filter: .not(filter)), table: collection, fullTextFields: nil)
            for id in try table.members(db, query: name, matching: unmatched) {
                try table.removeMember(db, query: name, id: id)
                try table.evictIfOrphan(db, table: collection, id: id)
            }
            // What was fully held stays the baseline while an earlier change is still downloading.
            try table.setFilter(db, name, filterText: text, heldFilterText: state.heldFilterText ?? state.filterText)
            try store.collectionStates.markNeedsPull(db, state.collection)
        }
    }

    /// Deletes a query; the records it alone held leave the device, unless they have local changes.
    func delete(name: String) throws {
        try store.writer.write { db in
            guard let state = try table.state(db, name) else { throw CairnError(.notFound, "no download query is named \"\(name)\"") }
            let ids = try table.removeMembers(db, query: name)
            try table.delete(db, name)
            guard let collection = try? store.table(state.collection) else { return }
            for id in ids { try table.evictIfOrphan(db, table: collection, id: id) }
        }
    }

    /// Marks a collection as pulled only through its download queries (even before it has any).
    func markPartial(_ collection: String) throws {
        if store.schema != nil { _ = try store.table(collection) }
        try store.writer.write { db in
            if try table.markPartial(db, collection) { try store.collectionStates.markNeedsPull(db, collection) }
        }
    }

    /// Pulls a collection whole again: its queries are deleted and a fresh snapshot replaces its records.
    func downloadWhole(_ collection: String) throws {
        try store.writer.write { db in
            for state in try table.states(db, collection: collection) {
                _ = try table.removeMembers(db, query: state.name)
                try table.delete(db, state.name)
            }
            try table.unmarkPartial(db, collection)
            try store.collectionStates.beginResync(db, collection)
            try store.collectionStates.markNeedsPull(db, collection)
        }
    }

    /// Makes the stored queries match ``CairnConfiguration/downloadFilters``: one query per listed collection.
    func applyConfiguration(_ filters: [String: Filter]) throws {
        let existing = try store.writer.read { db in try table.states(db, collection: nil) }.filter { $0.name.hasPrefix(Self.configurationPrefix) }
        for state in existing where filters[String(state.name.dropFirst(Self.configurationPrefix.count))] == nil {
            try delete(name: state.name)
        }
        for (collection, filter) in filters.sorted(by: { $0.key < $1.key }) {
            let name = Self.configurationPrefix + collection
            if existing.contains(where: { $0.name == name }) {
                try update(name: name, filter: filter)
            } else {
                try create(name: name, collection: collection, filter: filter, reservedName: true)
            }
        }
    }

    // MARK: Reading

    func isPartial(_ collection: String) throws -> Bool { try store.writer.read { db in try table.isPartial(db, collection) } }

    func state(_ name: String) throws -> DownloadQueryTable.State? { try store.writer.read { db in try table.state(db, name) } }

    func states(collection: String?) throws -> [DownloadQueryTable.State] {
        try store.writer.read { db in try table.states(db, collection: collection) }
    }

    /// The public view of the queries (of one collection, or all).
    func queries(collection: String?) throws -> [DownloadQuery] {
        try store.writer.read { db in
            try table.states(db, collection: collection).map { state in
                DownloadQuery(
                    name: state.name, collection: state.collection, filter: state.filter, firstPullCompleted: state.firstPullDone,
                    isUpdating: state.heldFilterText != nil, lastPullAt: state.lastPullAt, recordCount: try table.memberCount(db, query: state.name),
                    prefetchFiles: state.prefetchFiles)
            }
        }
    }

    // MARK: Pulling

    /// Starts a fresh snapshot of a query (its first pull, or after `cursor_expired`).
    func beginSnapshot(_ name: String) throws { try store.writer.write { db in try table.beginSnapshot(db, name) } }

    /// Starts the snapshot of a changed filter's new records again.
    func restartWidening(_ name: String) throws { try store.writer.write { db in try table.restartWidening(db, name) } }

    /// Ends a pull of a partial collection: sweeps the records no query holds once all its queries have pulled, and
    /// notes the collection pulled.
    func finishPull(_ collection: String) throws {
        let table = try store.table(collection)
        let date = store.now
        try store.writeBookkeeping { db in
            try self.table.sweep(db, table: table)
            try store.collectionStates.finishWithoutCursor(db, collection, at: date)
        }
    }

    // MARK: Checks

    private func check(name: String, reservedName: Bool) throws {
        guard !name.isEmpty, name.count <= 128 else { throw CairnError.invalid("a download query's name is 1 to 128 characters") }
        guard reservedName || !name.hasPrefix(Self.configurationPrefix) else {
            throw CairnError.invalid("names starting with \"\(Self.configurationPrefix)\" are kept for the configuration's download filters")
        }
    }

    /// The filter as JSON text, checked against the collection's schema when one is known.
    private func checked(_ filter: Filter, collection: String) throws -> String {
        if store.schema != nil {
            let table = try store.table(collection)
            do {
                _ = try FilterSQL.compile(filter, collection: table.schema, dialect: .sqlite) { table.fieldAccess($0) }
            } catch {
                throw CairnError(wrapping: error)
            }
        }
        return String(decoding: try CairnJSON.encode(filter), as: UTF8.self)
    }
}
