import CairnProtocol
import Foundation

extension CairnClient {
    // MARK: Dynamic records

    /// The record's current local state, or `nil`.
    public func record(_ collection: String, id: String) throws -> LocalRecord? {
        try checkOpen()
        return try store.record(collection, id: id)
    }

    /// The records a query selects, from the local store.
    public func records(_ query: Query) throws -> [LocalRecord] {
        try checkOpen()
        return try store.records(query)
    }

    /// Creates a record locally and queues its upload; `already_exists` if the id is taken locally.
    /// - Parameter options: its upload group, custom tag and headers (``WriteOptions``).
    @discardableResult
    public func create(_ collection: String, id: String, data: [String: JSONValue], options: WriteOptions = .none) throws -> LocalRecord {
        try checkOpen()
        let record = try store.write(collection: collection, id: id, change: .create(data), options: options)!
        noteLocalWrite()
        return record
    }

    /// Creates or fully replaces a record locally and queues its upload.
    /// - Parameter options: its upload group, custom tag and headers (``WriteOptions``).
    @discardableResult
    public func save(_ collection: String, id: String, data: [String: JSONValue], options: WriteOptions = .none) throws -> LocalRecord {
        try checkOpen()
        let record = try store.write(collection: collection, id: id, change: .save(data), options: options)!
        noteLocalWrite()
        return record
    }

    /// Applies a JSON Merge Patch locally (`null` removes a field) and queues its upload.
    /// - Parameter options: its upload group, custom tag and headers (``WriteOptions``).
    @discardableResult
    public func patch(_ collection: String, id: String, _ patch: [String: JSONValue], options: WriteOptions = .none) throws -> LocalRecord {
        try checkOpen()
        let record = try store.write(collection: collection, id: id, change: .patch(patch), options: options)!
        noteLocalWrite()
        return record
    }

    /// Deletes a record locally and queues its upload.
    /// - Parameter options: its upload group, custom tag and headers (``WriteOptions``).
    public func delete(_ collection: String, id: String, options: WriteOptions = .none) throws {
        try checkOpen()
        try store.write(collection: collection, id: id, change: .delete, options: options)
        noteLocalWrite()
    }

    /// Deletes every local record a query selects, in one transaction, and queues their deletions (SAP's
    /// `deleteByQuery`); returns how many were deleted. The query's sort, limit and offset apply.
    ///
    /// ```swift
    /// let dropped = try client.delete(Query("drafts", filter: .condition("updatedAt", .lt, "2026-01-01T00:00:00Z")))
    /// ```
    @discardableResult
    public func delete(_ query: Query, options: WriteOptions = .none) throws -> Int {
        try writeBatch(options: options) { batch in
            let ids = try store.records(batch.db, query).map(\.id)
            for id in ids { try batch.delete(query.collection, id: id) }
            return ids.count
        }
    }

    // MARK: Codable records

    /// Decodes a record as `T`. The record's id is offered to `T` as its `id` member.
    ///
    /// ```swift
    /// struct Note: Codable { var id: String?; var title: String; var due: Date?; var tags: [String] }
    /// let note = try client.get(Note.self, from: "notes", id: "n-1")
    /// ```
    public func get<T: Decodable>(_ type: T.Type, from collection: String, id: String) throws -> T? {
        try record(collection, id: id).map { try Self.decode(type, $0) }
    }

    /// Decodes every record a query selects as `T`.
    public func all<T: Decodable>(_ type: T.Type, _ query: Query) throws -> [T] {
        try records(query).map { try Self.decode(type, $0) }
    }

    /// Encodes `value` and saves it as the record `id` (an `id` member of `value` is not stored in the data).
    @discardableResult
    public func save<T: Encodable>(_ value: T, in collection: String, id: String, options: WriteOptions = .none) throws -> LocalRecord {
        try save(collection, id: id, data: Self.encode(value), options: options)
    }

    /// Encodes `value` and creates the record `id`.
    @discardableResult
    public func create<T: Encodable>(_ value: T, in collection: String, id: String, options: WriteOptions = .none) throws -> LocalRecord {
        try create(collection, id: id, data: Self.encode(value), options: options)
    }

    static func encode<T: Encodable>(_ value: T) throws -> [String: JSONValue] {
        let data: Data
        do { data = try CairnJSON.encode(value) } catch { throw CairnError.invalid("\(T.self) could not be encoded: \(error)") }
        guard var object = try JSONValue(parsing: data).objectValue else { throw CairnError.invalid("\(T.self) must encode as a JSON object") }
        object["id"] = nil
        return object
    }

    static func decode<T: Decodable>(_ type: T.Type, _ record: LocalRecord) throws -> T {
        var object = record.data
        object["id"] = .string(record.id)
        do {
            return try JSONValueDecoder().decode(type, from: .object(object))
        } catch {
            throw CairnError(.validationFailed, "\(record.id) cannot be read as \(T.self): \(error)")
        }
    }

    // MARK: SQL

    /// Runs read-only SQL on the local store and returns the rows as JSON objects.
    ///
    /// ```swift
    /// let rows = try client.rows("SELECT id, title FROM notes WHERE done = ? ORDER BY due", arguments: [false])
    /// ```
    public func rows(_ sql: String, arguments: [JSONValue] = []) throws -> [[String: JSONValue]] {
        try checkOpen()
        do {
            return try store.rows(sql: sql, arguments: arguments)
        } catch {
            throw CairnError.sql(error)
        }
    }

    /// Runs read-only SQL and answers as one JSON text, for callers that pass JSON along (the `cairn query` tool):
    /// `{"status":"ok","result":{"database":{"records":[...]}}}`, or `{"status":"error","error":{"code","message"}}`.
    public func queryJSON(_ sql: String, arguments: [JSONValue] = []) -> String {
        do {
            var text = #"{"status":"ok","result":{"database":{"records":"#
            JSONValue.array(try rows(sql, arguments: arguments).map { .object($0) }).write(to: &text)
            return text + "}}}"
        } catch {
            let failure = (error as? CairnError) ?? CairnError(.internalError, "\(error)")
            var text = #"{"status":"error","error":"#
            JSONValue.object(["code": .string(failure.code.rawValue), "message": .string(failure.message)]).write(to: &text)
            return text + "}"
        }
    }

    // MARK: Queue

    /// The changes waiting for upload that `filter` selects: all of them, oldest first, by default.
    ///
    /// ```swift
    /// let mine = try client.pendingOperations(OperationFilter(collection: "notes", ids: ["n-1"], newestFirst: true))
    /// ```
    public func pendingOperations(_ filter: OperationFilter = .all) throws -> [PendingOperation] {
        try checkOpen()
        return try store.uploads.pendingOperations(filter)
    }

    /// The uploads the server rejected that `filter` selects: all of them, oldest first, by default.
    public func failedOperations(_ filter: OperationFilter = .all) throws -> [FailedOperation] {
        try checkOpen()
        return try store.uploads.failedOperations(filter)
    }

    /// Cancels every queued operation `filter` selects, in one transaction; their records show what remains (SAP's
    /// `cancelPendingRequests`). Returns how many were cancelled.
    @discardableResult
    public func cancelPending(_ filter: OperationFilter) throws -> Int {
        try checkOpen()
        return try store.uploads.cancelPending(filter)
    }

    /// Queues again, unchanged and in the order they were made, every failed operation `filter` selects, in one
    /// transaction. Returns how many were queued.
    @discardableResult
    public func retryFailed(_ filter: OperationFilter) throws -> Int {
        try checkOpen()
        return try store.uploads.retryFailed(filter)
    }

    /// Deletes every failed operation `filter` selects, in one transaction; their records show the server's state
    /// again. Returns how many were deleted.
    @discardableResult
    public func discardFailed(_ filter: OperationFilter) throws -> Int {
        try checkOpen()
        return try store.uploads.discardFailed(filter)
    }

    /// Queues a failed operation again (with `data` replacing its payload when given); a change set's entry is queued
    /// again whole, as one set.
    public func retryFailed(_ id: Int64, data: [String: JSONValue]? = nil) throws {
        try checkOpen()
        try store.uploads.retryFailed(id: id, data: data)
    }

    /// Deletes a failed operation (a change set's entry whole); its records show the server's state again (with any
    /// other pending changes).
    public func discardFailed(_ id: Int64) throws {
        try checkOpen()
        try store.uploads.discardFailed(id: id)
    }

    /// Drops the pending (and failed) changes of these records: they show the last server state again.
    public func undoPendingChanges(in collection: String, ids: [String]) throws {
        try checkOpen()
        try store.uploads.undoChanges(collection: collection, ids: ids)
    }

    /// Cancels one queued operation.
    public func cancel(opId: String) throws {
        try checkOpen()
        try store.uploads.cancel(opId: opId)
    }

    /// The conflicts that happened and how they were resolved, newest first.
    public func conflicts(limit: Int = 100) throws -> [ConflictRecord] {
        try checkOpen()
        return try store.uploads.conflicts(limit: limit)
    }
}
