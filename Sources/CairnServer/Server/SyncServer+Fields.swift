import CairnProtocol
import Foundation

extension SyncServer {
    /// Sets fields of a live record at a new project-wide version, outside any batch, and sends the live notice:
    /// what a completed file does to the record field it is attached to. The fields merge into the record as a
    /// JSON Merge Patch and must fit the collection's schema.
    ///
    /// ```swift
    /// let record = try await server.setFields(["photo": "f-42"], project: "field", collection: "notes", id: "n1", user: "alice")
    /// ```
    /// - Throws: `not_found` for an unknown project, collection or record (deleted ones included), `validation_failed`.
    @discardableResult
    public func setFields(
        _ fields: [String: JSONValue], project: String, collection: String, id: String, user: String
    ) async throws -> Record {
        guard let schema = try await storage.schema(project: project), let collectionSchema = schema.collection(named: collection) else {
            throw ErrorBody(code: .notFound, message: "collection \(project)/\(collection) does not exist")
        }
        return try await RecordWriter.setFields(
            fields, collection: collectionSchema, id: id, project: project, user: user, now: clock.now(), commits: commits)
    }
}
