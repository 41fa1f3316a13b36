import GRDB

/// The full-text index of one collection: an FTS5 table over some of its string fields (`cairn_fts_COLLECTION`),
/// reading its text from the collection table (external content) and kept in step with every write to it (local
/// writes, pulled pages, deletions) by three triggers.
///
/// ```swift
/// try FullTextIndex(collection: "notes", fields: ["title", "body"]).create(db)
/// ```
struct FullTextIndex: Sendable, Hashable {
    /// The collection indexed.
    let collection: String
    /// Its string fields that are searched.
    let fields: [String]

    /// The FTS5 table's name, quoted.
    var quotedName: String { CollectionTable.quote(Self.tableName(collection)) }

    /// The FTS5 table's name for a collection.
    static func tableName(_ collection: String) -> String { "cairn_fts_\(collection)" }

    /// Creates the index and its triggers (replacing those of other fields) and fills it from the rows already stored,
    /// unless it exists over the same fields.
    func ensure(_ db: Database) throws {
        let existing = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [Self.tableName(collection)])
        if existing == virtualTableSQL { return }
        try Self.drop(db, collection: collection)
        let table = CollectionTable.quote(collection)
        let columns = fields.map(CollectionTable.quote)
        let list = columns.joined(separator: ", ")
        let newValues = columns.map { "new.\($0)" }.joined(separator: ", ")
        let oldValues = columns.map { "old.\($0)" }.joined(separator: ", ")
        let insertNew = "INSERT INTO \(quotedName) (rowid, \(list)) VALUES (new.rowid, \(newValues));"
        let deleteOld = "INSERT INTO \(quotedName) (\(quotedName), rowid, \(list)) VALUES ('delete', old.rowid, \(oldValues));"
        let changed = columns.map { "old.\($0) IS NOT new.\($0)" }.joined(separator: " OR ")
        try db.execute(sql: """
            \(virtualTableSQL);
            CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(table) BEGIN \(insertNew) END;
            CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(table) BEGIN \(deleteOld) END;
            CREATE TRIGGER \(trigger("update")) AFTER UPDATE ON \(table) WHEN \(changed) BEGIN \(deleteOld) \(insertNew) END;
            INSERT INTO \(quotedName) (\(quotedName)) VALUES ('rebuild');
            """)
    }

    /// Drops a collection's full-text index and triggers, if any.
    static func drop(_ db: Database, collection: String) throws {
        for kind in ["insert", "delete", "update"] {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(CollectionTable.quote("\(tableName(collection))_\(kind)"))")
        }
        try db.execute(sql: "DROP TABLE IF EXISTS \(CollectionTable.quote(tableName(collection)))")
    }

    /// The statement that creates the FTS5 table (SQLite keeps it as written, so it also tells whether the index is current).
    private var virtualTableSQL: String {
        let list = fields.map(CollectionTable.quote).joined(separator: ", ")
        return "CREATE VIRTUAL TABLE \(quotedName) USING fts5(\(list), content=\(CollectionTable.quote(collection)), content_rowid=rowid, "
            + "tokenize='unicode61 remove_diacritics 2')"
    }

    private func trigger(_ kind: String) -> String { CollectionTable.quote("\(Self.tableName(collection))_\(kind)") }

    /// An FTS5 query that finds every word of `text`, the last also as a prefix; words are quoted, so the app's text
    /// is never read as FTS syntax. `nil` when `text` holds no word.
    static func matchExpression(_ text: String) -> String? {
        let words = text.split(whereSeparator: { $0.isWhitespace }).map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        guard let last = words.last else { return nil }
        return (words.dropLast() + [last + "*"]).joined(separator: " ")
    }
}
