import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Uploads were applied (and have left the queue): each record's base moves to its committed state. The usual
    /// case (a create or update with nothing else pending for the record) is done for the whole batch in one
    /// statement per collection; the others, one by one.
    func acknowledge(_ db: Database, _ applied: [(PendingOperation, ScannedResult)]) throws {
        guard !applied.isEmpty else { return }
        // The states these writes committed are the store's: the next pull need not bring them back.
        var own: [String: [Int64]] = [:]
        for (operation, result) in applied { if let version = result.version { own[operation.collection, default: []].append(version) } }
        try collectionStates.noteOwn(db, versions: own)
        var dates = DateTextCache()
        // A create or update commits exactly the local data: only the sync columns change, unless the record has
        // other changes or a pull brought a newer server state (the statement leaves those rows alone).
        var usual: [String: [JSONValue]] = [:]
        for (operation, result) in applied where !result.deleted && (operation.kind == .create || operation.kind == .update) {
            usual[operation.collection, default: []].append(.array([
                .string(operation.recordID), .integer(result.version ?? 0),
                result.updatedAt.map { .string(dates.text($0)) } ?? .null, result.updatedBy.map(JSONValue.string) ?? .null,
            ]))
        }
        var acknowledged: [String: Set<String>] = [:]
        for (collection, rows) in usual {
            let ids = try table(collection).acknowledge(db, rows: rows)
            try shadows.remove(db, collection: collection, ids: Array(ids))
            acknowledged[collection] = ids
        }
        let others = applied.filter { acknowledged[$0.0.collection]?.contains($0.0.recordID) != true }
        guard !others.isEmpty else { return }
        // Which records still hold local changes, and which server versions pulls already brought.
        let keys = JSONValue.array(others.map { .array([.string($0.0.collection), .string($0.0.recordID)]) }).jsonText()
        let states = try Row.fetchAll(db.cachedStatement(sql: Self.acknowledgedStatesSQL), arguments: [keys])
        for ((operation, result), state) in zip(others, states) {
            let record: ServerRecord
            do {
                record = try result.appliedRecord(id: operation.recordID, sent: operation.dataText)!
            } catch {
                throw CairnError.badResponse("the applied record of \(operation.opId) could not be read", cause: error)
            }
            try acknowledge(db, table: try table(operation.collection), operation: operation, record: record, dates: &dates,
                            hasMoreChanges: state[0], serverVersion: state[1])
        }
    }

    /// For each `[collection, id]` of a JSON array, in order: whether the record still has local changes
    /// (``LocalChanges``), and the server version its shadow knows (0 without a shadow).
    private static let acknowledgedStatesSQL = """
        SELECT \(LocalChanges.sql(collection: "k.value ->> '$[0]'", id: "k.value ->> '$[1]'")),
               \(CollectionTable.shadowServerVersionSQL(collection: "k.value ->> '$[0]'", id: "k.value ->> '$[1]'"))
        FROM json_each(?) AS k ORDER BY k.key
        """

    /// One applied upload outside the usual case: the record still has changes, a pull brought a newer server
    /// state, it was deleted, or a patch whose committed data may differ from the local data.
    private func acknowledge(
        _ db: Database, table: CollectionTable, operation: PendingOperation, record: ServerRecord, dates: inout DateTextCache,
        hasMoreChanges moreChanges: Bool, serverVersion: Int64
    ) throws {
        let updatedAt = record.updatedAt.map { dates.text($0) }
        if !moreChanges, serverVersion <= record.version {
            // Nothing else is pending for this record, so it shows the committed state.
            try shadows.remove(db, collection: table.name, id: operation.recordID)
            if record.deleted {
                try table.remove(db, id: operation.recordID)
                return
            }
            // A create or update commits exactly the local data; a patch may have merged other changes.
            let exact = operation.kind == .create || operation.kind == .update
            let committed = exact ? nil : JSONValue.object(record.data).jsonText()
            if try !table.acknowledge(db, id: operation.recordID, version: record.version, updatedAt: updatedAt, updatedBy: record.updatedBy,
                                      data: committed) {
                try table.upsert(db, id: operation.recordID, data: record.data, version: record.version,
                                 updatedAt: updatedAt, updatedBy: record.updatedBy)
            }
            return
        }
        var shadow = try shadows.shadow(db, collection: table.name, id: operation.recordID) ?? Shadow()
        shadow.baseVersion = record.version
        shadow.baseData = record.deleted ? nil : record.data
        if record.version >= (shadow.serverVersion ?? 0) {
            shadow.serverVersion = record.version
            shadow.serverData = shadow.baseData
        }
        try shadows.save(db, shadow, collection: table.name, id: operation.recordID)
        if moreChanges {
            try table.setSyncColumns(db, id: operation.recordID, version: record.version, updatedAt: updatedAt, updatedBy: record.updatedBy)
        } else {
            try rebuildVisible(db, table: table, id: operation.recordID)
        }
    }
}

/// Formats commit times once per distinct date: a batch's results share one.
struct DateTextCache {
    private var last: (Date, String)?

    mutating func text(_ date: Date) -> String {
        if let last, last.0 == date { return last.1 }
        let text = RFC3339.string(from: date)
        last = (date, text)
        return text
    }
}
