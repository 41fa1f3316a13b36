import CairnProtocol
import Foundation
import GRDB
import Synchronization

/// A named, persistent cache of JSON objects (data from other APIs, say), searchable by the fields it declares.
/// Entries are upserted by their top-level `"id"`, and queried with the same filter language as records.
///
/// ```swift
/// let products = try client.jsonCache(name: "products", fields: [.string("sku"), .number("price")])
/// try products.cache(try JSONValue(parsing: responseBody).arrayValue ?? [])
/// let cheap = try products.entries(where: .condition("price", .lt, 10), sortedBy: [.init("price")])
/// ```
///
/// A client's caches are scoped to its server and project; ``JSONCaches`` opens caches with no server at all. Two
/// scopes never see each other's entries, even under the same name.
public final class JSONCache: Sendable {
    /// The cache's name.
    public let name: String
    /// The scope it belongs to.
    public let scope: String
    let writer: any DatabaseWriter
    let table = JSONCacheTable()
    /// Where the ``async`` calls run, one after another.
    let queue = BlockingQueue(label: "cairn.cache")
    private let state: Mutex<JSONCacheTable.Entry>

    init(writer: any DatabaseWriter, scope: String, name: String, fields: [CacheField]) throws {
        guard !name.isEmpty else { throw CairnError.invalid("a cache needs a name") }
        try Self.check(fields)
        self.writer = writer
        self.scope = scope
        self.name = name
        let table = self.table
        state = Mutex(try Self.writing(writer) { db in try table.open(db, scope: scope, name: name, fields: fields) })
    }

    /// One write transaction of the cache, its failure as a ``CairnError`` (a full device: `storage_full`).
    static func writing<T>(_ writer: any DatabaseWriter, _ body: (Database) throws -> T) throws -> T {
        do { return try writer.write(body) } catch { throw CairnError.store(error) }
    }

    /// The searchable fields.
    public var fields: [CacheField] { state.withLock { $0.fields } }

    private var entry: JSONCacheTable.Entry { state.withLock { $0 } }

    // MARK: Writing

    /// Upserts JSON objects by their top-level `"id"` (a string, or an integer kept as its decimal text), in one
    /// transaction. An entry that is not an object or has no id is an `invalid_argument` error naming it, and then
    /// nothing is cached.
    ///
    /// - Returns: the number of entries written.
    @discardableResult
    public func cache(_ entries: [JSONValue]) throws -> Int {
        var prepared: [(id: String, text: String, object: [String: JSONValue])] = []
        prepared.reserveCapacity(entries.count)
        for (index, value) in entries.enumerated() {
            guard let object = value.objectValue else { throw CairnError.invalid("entry \(index) of \(name) is \(value.kindName), not a JSON object") }
            let id: String
            switch object["id"] {
            case .string(let text)? where !text.isEmpty: id = text
            case .integer(let number)?: id = String(number)
            default:
                let keys = object.keys.sorted().prefix(5).joined(separator: ", ")
                throw CairnError.invalid("entry \(index) of \(name) has no top-level \"id\" (a string or integer); its keys: \(keys); nothing was cached")
            }
            prepared.append((id, value.jsonText(), object))
        }
        let entry = self.entry
        let statements = JSONCacheTable.Statements(entry)
        try Self.writing(writer) { db in
            let upsert = try db.cachedStatement(sql: statements.upsert)
            for item in prepared {
                try upsert.execute(arguments: JSONCacheTable.Statements.arguments(entry, id: item.id, text: item.text, object: item.object))
            }
        }
        return prepared.count
    }

    /// Upserts the objects of a JSON array given as bytes (an API's answer, say).
    @discardableResult
    public func cache(jsonArray data: Data) throws -> Int {
        guard case .array(let values) = try JSONValue(parsing: data) else { throw CairnError.invalid("\(name): the JSON is not an array") }
        return try cache(values)
    }

    /// Removes the entries with these ids (ids not cached are ignored).
    public func remove(ids: [String]) throws {
        let sql = JSONCacheTable.Statements(entry).remove
        try Self.writing(writer) { db in
            let remove = try db.cachedStatement(sql: sql)
            for id in ids { try remove.execute(arguments: [id]) }
        }
    }

    /// Removes every entry.
    public func removeAll() throws {
        let sql = JSONCacheTable.Statements(entry).removeAll
        try Self.writing(writer) { db in try db.execute(sql: sql) }
    }

    /// Declares new searchable fields and rebuilds them from the entries already cached.
    public func reindex(fields: [CacheField]) throws {
        try Self.check(fields)
        let table = self.table, scope = self.scope, name = self.name
        let updated = try Self.writing(writer) { db in try table.open(db, scope: scope, name: name, fields: fields) }
        state.withLock { $0 = updated }
    }

    // MARK: Reading

    /// The entry with this id, if cached.
    public func entry(id: String) throws -> [String: JSONValue]? {
        let sql = JSONCacheTable.Statements(entry).entry
        return try writer.read { db in try String.fetchOne(db, sql: sql, arguments: [id]).flatMap(decodeObject) }
    }

    /// The entries a filter selects, sorted by declared fields (then by id). Filters and sorting may name only the
    /// declared fields and `id`: another is a `validation_failed` error naming it.
    public func entries(where filter: Filter? = nil, sortedBy sort: [Query.SortKey] = [], limit: Int? = nil, offset: Int? = nil) throws -> [[String: JSONValue]] {
        let compiled = try compile(filter, sort: sort, limit: limit, offset: offset)
        return try writer.read { db in
            try String.fetchAll(db, sql: "SELECT t.cairn_json" + compiled.fromWhere + compiled.orderLimit, arguments: compiled.arguments).compactMap(decodeObject)
        }
    }

    /// How many entries a filter selects.
    public func count(where filter: Filter? = nil) throws -> Int {
        let compiled = try compile(filter, sort: [], limit: nil, offset: nil)
        return try writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*)" + compiled.fromWhere, arguments: compiled.arguments) ?? 0 }
    }

    /// The query compiled by ``LocalQuerySQL``, as over a collection whose fields are the declared ones; its
    /// errors name the cache and its declared fields.
    private func compile(_ filter: Filter?, sort: [Query.SortKey], limit: Int?, offset: Int?) throws -> LocalQuerySQL {
        let entry = self.entry
        let table = CollectionTable(schema: CollectionSchema(name: entry.tableName, fields: entry.fields.map { FieldSchema(name: $0.name, type: $0.type) }))
        do {
            return try LocalQuerySQL(Query(entry.tableName, filter: filter, sort: sort, limit: limit, offset: offset), table: table, fullTextFields: nil)
        } catch let error as CairnError {
            let message = error.message.replacingOccurrences(of: entry.tableName, with: name)
                .replacingOccurrences(of: "only schema fields", with: "only declared fields")
                .replacingOccurrences(of: "not a field of", with: "not a declared field of")
            throw CairnError(error.code, message, details: error.details)
        }
    }

    private static func check(_ fields: [CacheField]) throws {
        var seen: Set<String> = []
        for field in fields {
            guard CacheField.searchableTypes.contains(field.type) else {
                throw CairnError.invalid("cache field \"\(field.name)\" is \(field.type.rawValue); use string, integer, number, boolean or datetime")
            }
            guard !field.name.isEmpty, field.name != "id", !field.name.hasPrefix("cairn_") else {
                throw CairnError.invalid("\"\(field.name)\" cannot be a cache field name (id is always searchable)")
            }
            guard seen.insert(field.name).inserted else { throw CairnError.invalid("cache field \"\(field.name)\" is declared twice") }
        }
    }
}
