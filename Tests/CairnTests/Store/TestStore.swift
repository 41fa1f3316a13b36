import CairnProtocol
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import Cairn

/// A local store on an in-memory database with a `notes` collection and a manual clock: store logic tested with no
/// server and no network. Server answers and pulled pages are made here.
struct TestStore {
    let store: LocalStore
    let clock = ManualWallClock()

    static let schema = Schema(collections: [
        CollectionSchema(
            name: "notes",
            fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "count", type: .integer), FieldSchema(name: "tags", type: .json)],
            conflictPolicy: .mergeFields),
        CollectionSchema(name: "tasks", fields: [FieldSchema(name: "done", type: .boolean)]),
    ])

    init() throws {
        store = try LocalStore(writer: DatabaseQueue(), configuration: StoreConfiguration(wallClock: clock))
        try store.apply(schema: Self.schema, etag: "\"v1\"")
    }

    // MARK: Local state

    /// The record as the app reads it.
    func record(_ id: String, in collection: String = "notes") throws -> LocalRecord? { try store.record(collection, id: id) }

    /// The queue, oldest first.
    func queued() throws -> [PendingOperation] { try store.uploads.pendingOperations() }

    /// A record's shadow.
    func shadow(_ id: String, in collection: String = "notes") throws -> Shadow? {
        try store.writer.read { db in try store.shadows.shadow(db, collection: collection, id: id) }
    }

    /// The number of rows of a table.
    func count(_ table: String) throws -> Int {
        try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(CollectionTable.quote(table))") ?? 0 }
    }

    // MARK: Pulling

    /// True while the store notes a pull of `collection` under way (the `pulling` column of `cairn_collections`).
    func pulling(_ collection: String) throws -> Bool {
        try store.writer.read { db in
            try Bool.fetchOne(db, sql: "SELECT pulling FROM cairn_collections WHERE name = ?", arguments: [collection]) ?? false
        }
    }

    /// A change of a pulled page: a record state, or a tombstone when `data` is `nil`.
    struct Change {
        var id: String
        var version: Int64
        var data: [String: JSONValue]?
    }

    /// Applies a page as the server would send it.
    @discardableResult
    func pull(_ changes: [Change], in collection: String = "notes", cursor: String = "c1", hasMore: Bool = false) throws -> AppliedPage {
        var objects: [JSONValue] = []
        for change in changes {
            var object: [String: JSONValue] = ["id": .string(change.id), "version": .integer(change.version)]
            if let data = change.data {
                object["data"] = .object(data)
                object["updatedAt"] = "2026-11-23T10:00:00.000Z"
                object["updatedBy"] = "server-user"
            } else {
                object["deleted"] = true
            }
            objects.append(.object(object))
        }
        let body = JSONValue.object(["changes": .array(objects), "cursor": .string(cursor), "hasMore": .bool(hasMore)]).jsonText()
        return try store.apply(try store.scan(Data(body.utf8), collection: collection), to: .feed(collection: collection))
    }

    // MARK: Pushing

    /// Takes a batch as an upload would, and records the answers `answer` gives for it.
    @discardableResult
    func push(limit: Int = 100, answer: (PendingOperation) -> ScannedResult) throws -> [(PendingOperation, ServerRecord)] {
        let batch = try store.uploads.takeBatch(limit: limit)
        return try store.uploads.recordAnswers(batch.map(answer), for: batch)
    }

    /// The server applied `operation` at `version`, committing `data` (the operation's own data when `nil`).
    static func applied(_ operation: PendingOperation, version: Int64, data: [String: JSONValue]? = nil) -> ScannedResult {
        let deleted = operation.kind == .delete
        return ScannedResult(
            opId: operation.opId, status: .applied, version: version, deleted: deleted, updatedAt: Date(timeIntervalSince1970: 1_900_000_000),
            updatedBy: "alice", dataText: deleted ? nil : JSONValue.object(data ?? operation.data ?? [:]).jsonText())
    }

    /// The server refused `operation`.
    static func rejected(_ operation: PendingOperation, _ code: ErrorCode = .validationFailed) -> ScannedResult {
        ScannedResult(opId: operation.opId, status: .rejected, error: ErrorBody(code: code, message: "refused"))
    }

    /// The server holds a newer state of the record than `operation` was made on.
    static func conflict(_ operation: PendingOperation, current: ServerRecord) -> ScannedResult {
        ScannedResult(opId: operation.opId, status: .conflict, current: current)
    }
}

/// Expects `body` to throw a ``CairnError`` with `code`.
func expectError(_ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    let error = #expect(throws: CairnError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}
