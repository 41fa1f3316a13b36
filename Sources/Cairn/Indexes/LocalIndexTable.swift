import CairnProtocol
import GRDB

/// The indexes the app asked for (`cairn_local_indexes`): B-tree indexes over fields of a collection, and at most one
/// full-text index per collection. They are kept as definitions, so they come back whenever a collection's table is
/// created again (a new schema), and are applied to the table as soon as it exists. Wiping the store (a user switch)
/// forgets them, with everything else; those named in the configuration are made again when the store opens.
struct LocalIndexTable: StoreTable {
    /// One definition.
    struct Definition: Sendable, Hashable {
        enum Kind: String, Sendable { case index, fullText = "fulltext" }
        var collection: String
        var kind: Kind
        var fields: [String]

        /// The B-tree index's name, quoted.
        var quotedIndexName: String { CollectionTable.quote("cairn_app_\(collection)_" + fields.joined(separator: "_")) }
    }

    var tableNames: [String] { ["cairn_local_indexes"] }

    /// Its part of migration v4.
    static func createV4(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_local_indexes (
                collection TEXT NOT NULL, kind TEXT NOT NULL, fields TEXT NOT NULL, PRIMARY KEY (collection, kind, fields)
            ) WITHOUT ROWID
            """)
    }

    /// Adds a definition; a full-text definition replaces the collection's previous one.
    func add(_ db: Database, _ definition: Definition) throws {
        if definition.kind == .fullText {
            try db.execute(sql: "DELETE FROM cairn_local_indexes WHERE collection = ? AND kind = ?", arguments: [definition.collection, definition.kind.rawValue])
        }
        try db.execute(
            sql: "INSERT OR IGNORE INTO cairn_local_indexes (collection, kind, fields) VALUES (?, ?, ?)",
            arguments: [definition.collection, definition.kind.rawValue, JSONValue.array(definition.fields.map { .string($0) }).jsonText()])
    }

    /// Removes a collection's full-text definition.
    func removeFullText(_ db: Database, collection: String) throws {
        try db.execute(sql: "DELETE FROM cairn_local_indexes WHERE collection = ? AND kind = 'fulltext'", arguments: [collection])
    }

    /// The definitions of one collection.
    func definitions(_ db: Database, collection: String) throws -> [Definition] {
        try Row.fetchAll(db, sql: "SELECT kind, fields FROM cairn_local_indexes WHERE collection = ? ORDER BY kind, fields", arguments: [collection])
            .compactMap { row in
                guard let kind = Definition.Kind(rawValue: row[0]), let fields = decodeStrings(row[1]) else { return nil }
                return Definition(collection: collection, kind: kind, fields: fields)
            }
    }

    /// Applies a collection's definitions to its table: creates the indexes it lacks and the full-text index. Fields
    /// the schema does not declare are skipped (a later schema may add them).
    func apply(_ db: Database, to table: CollectionTable) throws {
        for definition in try definitions(db, collection: table.name) {
            let expressions = definition.fields.map { try? table.readExpression($0) }
            guard expressions.allSatisfy({ $0 != nil }) else { continue }
            switch definition.kind {
            case .index:
                try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(definition.quotedIndexName) ON \(table.quotedName) "
                               + "(\(expressions.compactMap { $0 }.joined(separator: ", ")))")
            case .fullText:
                try FullTextIndex(collection: table.name, fields: definition.fields).ensure(db)
            }
        }
    }

    /// The searched fields of a collection, if it has a full-text index.
    func fullTextFields(_ db: Database, collection: String) throws -> [String]? {
        try definitions(db, collection: collection).first { $0.kind == .fullText }?.fields
    }

    private func decodeStrings(_ text: String) -> [String]? {
        guard case .array(let values)? = try? JSONValue(parsing: Array(text.utf8)) else { return nil }
        return values.compactMap(\.stringValue)
    }
}
