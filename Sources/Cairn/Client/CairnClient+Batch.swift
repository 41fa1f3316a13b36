import CairnProtocol
import Foundation
import GRDB

/// Writes made inside ``CairnClient/writeBatch(options:_:)`` or ``CairnClient/writeChangeSet(options:_:)``: they commit to the local
/// store together, or none do. In a batch each is uploaded as its own operation (the server may accept some and refuse
/// others); in a change set they are uploaded together and the server applies all or none.
public struct BatchWriter {
    let store: LocalStore
    let db: Database
    /// The change set the writes belong to; `nil` in a plain batch.
    var changeSet: String? = nil
    /// Collections uploaded by the app's own sync tasks, which a change set may not hold.
    var excluded: [String: any CollectionSyncTask] = [:]
    /// The upload group, custom tag and headers of every write it makes.
    var options = WriteOptions.none

    private func write(_ collection: String, id: String, change: LocalChange) throws -> LocalRecord? {
        if changeSet != nil, excluded[collection] != nil {
            throw CairnError.invalid("\(collection) is uploaded by the app's sync task, so its changes cannot be part of a change set")
        }
        return try store.write(db, collection: collection, id: id, change: change, changeSet: changeSet, options: options)
    }

    /// Creates a record; `already_exists` if the id is taken locally.
    @discardableResult
    public func create(_ collection: String, id: String, data: [String: JSONValue]) throws -> LocalRecord {
        try write(collection, id: id, change: .create(data))!
    }

    /// Creates or fully replaces a record.
    @discardableResult
    public func save(_ collection: String, id: String, data: [String: JSONValue]) throws -> LocalRecord {
        try write(collection, id: id, change: .save(data))!
    }

    /// Applies a JSON Merge Patch to a record.
    @discardableResult
    public func patch(_ collection: String, id: String, _ patch: [String: JSONValue]) throws -> LocalRecord {
        try write(collection, id: id, change: .patch(patch))!
    }

    /// Deletes a record.
    public func delete(_ collection: String, id: String) throws {
        _ = try write(collection, id: id, change: .delete)
    }

    /// Encodes `value` and saves it as the record `id`.
    @discardableResult
    public func save<T: Encodable>(_ value: T, in collection: String, id: String) throws -> LocalRecord {
        try save(collection, id: id, data: CairnClient.encode(value))
    }
}

extension CairnClient {
    /// Makes many local writes in one transaction: faster for imports, and all-or-nothing on the device. Each is
    /// uploaded on its own; for writes the server must apply all or none, use ``writeChangeSet(options:_:)``.
    ///
    /// ```swift
    /// try client.writeBatch { batch in
    ///     for visit in visits { try batch.save(visit, in: "visits", id: visit.id) }
    /// }
    /// ```
    ///
    /// - Parameter options: the upload group, custom tag and headers of every write in the batch.
    @discardableResult
    public func writeBatch<T>(options: WriteOptions = .none, _ body: (BatchWriter) throws -> T) throws -> T {
        try writeTogether(changeSet: nil, options: options, body)
    }

    /// Runs `body` with a writer in one store transaction, the writes in `changeSet` if given, then checks the set.
    func writeTogether<T>(changeSet: String?, options: WriteOptions, _ body: (BatchWriter) throws -> T) throws -> T {
        try checkOpen()
        do {
            let result = try store.writing { db in
                let writer = BatchWriter(store: store, db: db, changeSet: changeSet, excluded: configuration.syncTasks, options: options)
                let result = try body(writer)
                if let changeSet { try store.uploads.checkChangeSet(db, changeSet) }
                return result
            }
            noteLocalWrite()
            return result
        } catch let error as CairnError {
            throw error
        } catch {
            throw CairnError.store(error)
        }
    }
}
