import CairnProtocol
import Foundation

extension RecordWriter {
    /// Sets fields of one live record at a new version in its own transaction, as an ordinary change outside any
    /// batch (a completed file setting the field it is attached to). The fields are merged into the record as a
    /// patch and checked against the collection's schema; a missing or deleted record is `not_found`.
    /// - Returns: the record's new state (unchanged when the fields held these values already).
    static func setFields(
        _ fields: [String: JSONValue], collection: CollectionSchema, id: String, project: String, user: String, now: Date,
        commits: RecordCommits
    ) async throws -> Record {
        try await commits.write(
            project: project, reads: TransactionReads(records: [collection.name: [id]]), user: user, now: now,
            schema: Schema(collections: [collection])
        ) { snapshot, writer -> TransactionEnd<Record> in
            let row = snapshot.records[collection.name]?.first
            guard let current = try row.map(StoredRecordState.init), !current.record.deleted else {
                throw ErrorBody(code: .notFound, message: "record \(collection.name)/\(id) does not exist", details: ["id": .string(id)])
            }
            // The batch rules of an unconditional patch: merge, validate.
            let patch = SyncOperation(opId: "server-\(id)", collection: collection.name, id: id, op: .patch, data: fields)
            switch BatchPlanner.plan(patch, current: current, collection: collection) {
            case .write(let data, _):
                return .commit(try await writer.write(collection: collection.name, id: id, data: data, previous: current).state.record)
            case .unchanged(let record), .conflict(let record):
                return .rollback(record)
            case .reject(let error):
                throw error
            }
        }.value
    }
}
