import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Brings the local records to `schema`'s shape by its declared steps when it is the next numbered schema after
    /// `previous` (an app update across a breaking change): the server migrated its records the same way, and this
    /// store already pulled them in the older shape, so nothing needs to be downloaded again. Returns the collections
    /// whose new columns the steps fill (they need no fresh pull); none when the steps do not lead here from
    /// `previous` (a jump of several numbers: those collections are pulled again instead).
    func migrateLocally(_ db: Database, from previous: Schema?, to schema: Schema) throws -> Set<String> {
        guard let previous, schema.number == previous.number + 1, !schema.migrations.isEmpty else { return [] }
        let steps = DataStep.resolve(schema.migrations, from: previous)
        var covered = Set<String>()
        for collection in Set(steps.map(\.collection)) {
            guard let old = previous.collection(named: collection), let new = schema.collection(named: collection),
                try db.tableExists(collection)
            else { continue }
            let collectionSteps = steps.filter { $0.collection == collection }
            let table = CollectionTable(schema: new)
            for row in try Row.fetchAll(db, sql: "SELECT id, cairn_data FROM \(table.quotedName)") {
                guard var data = decodeObject(row["cairn_data"]) else { continue }
                let before = data
                for step in collectionSteps { step.apply(to: &data) }
                if data != before {
                    try db.execute(
                        sql: "UPDATE \(table.quotedName) SET cairn_data = ? WHERE id = ?", arguments: [JSONValue.object(data).jsonText(), row["id"] as String])
                }
            }
            try migrateShadows(db, collection: collection, steps: collectionSteps)
            // Converted fields keep their columns: read them again from the data (a renamed one's column is made
            // and filled after this).
            let columns = Set(try db.columns(in: collection).map(\.name))
            for step in collectionSteps {
                guard case .convert(let field, _, _, _) = step.kind, columns.contains(field), let declared = new.field(named: field) else { continue }
                try db.execute(sql: "UPDATE \(table.quotedName) SET \(CollectionTable.quote(field)) = \(CollectionTable.extract(declared, document: "cairn_data", path: "$"))")
            }
            // The new columns the steps fill (renamed and filled fields) come from the rewritten data.
            let stepFields = Set(collectionSteps.compactMap { step -> String? in
                switch step.kind {
                case .rename(_, let to): return to
                case .fill(let field, _): return field
                default: return nil
                }
            })
            let added = Set(new.fields.map(\.name)).subtracting(old.fields.map(\.name))
            if added.isSubset(of: stepFields) { covered.insert(collection) }
        }
        return covered
    }

    /// The shadows' server states, in the new shape too, so a conflict compares like with like.
    private func migrateShadows(_ db: Database, collection: String, steps: [DataStep]) throws {
        let rows = try Row.fetchAll(
            db, sql: "SELECT record_id, base_data, server_data FROM cairn_shadow WHERE collection = ?", arguments: [collection])
        for row in rows {
            var texts: [String?] = []
            for column in ["base_data", "server_data"] {
                guard var data = decodeObject(row[column]) else {
                    texts.append(row[column])
                    continue
                }
                for step in steps { step.apply(to: &data) }
                texts.append(JSONValue.object(data).jsonText())
            }
            try db.execute(
                sql: "UPDATE cairn_shadow SET base_data = ?, server_data = ? WHERE collection = ? AND record_id = ?",
                arguments: [texts[0], texts[1], collection, row["record_id"] as String])
        }
    }
}
