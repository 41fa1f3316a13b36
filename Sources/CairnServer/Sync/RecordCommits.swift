import CairnProtocol
import Foundation

/// The one way records are written: a ``RecordWriter`` inside one project write transaction, whose changes are
/// announced to live listeners once the transaction committed. Batches, fields set by a completed file and schema
/// migrations all write through it, so no caller publishes a notice itself and none is sent for a rolled-back write.
///
/// ```swift
/// let (record, _) = try await commits.write(project: "field", reads: reads, user: "alice", now: now, schema: schema) { snapshot, writer in
///     let written = try await writer.write(collection: "notes", id: "n1", data: ["title": "a"], previous: nil)
///     return .commit(written.state.record)
/// }
/// ```
struct RecordCommits: Sendable {
    let storage: any ServerStorage
    /// Who hears of committed changes: this instance's listeners and, through its channel, the other instances'.
    /// `nil` where no one can listen (`cairn admin` works on the data directly, with no server running).
    let notifier: ChangeNotifier?

    /// Reads `reads`, runs `body` with a writer numbering from the snapshot's head version, and on `.commit` stores
    /// the new head version, commits, then sends one live notice per changed collection. `.rollback` discards every
    /// write and tells no one. Returns what `body` returned and the highest new version per changed collection.
    @discardableResult
    func write<Value: Sendable>(
        project: String, reads: TransactionReads, user: String, now: Date, schema: Schema?,
        _ body: (TransactionSnapshot, inout RecordWriter) async throws -> TransactionEnd<Value>
    ) async throws -> (value: Value, changes: [String: Int64]) {
        try await write(project: project, user: user, now: now, schema: schema, read: { try await $0.read(reads) }, head: \.headVersion, body)
    }

    /// ``write(project:reads:user:now:schema:_:)`` with the first read of the transaction chosen by the caller:
    /// `read` finds what `body` starts from, `head` its head version.
    func write<Found, Value: Sendable>(
        project: String, user: String, now: Date, schema: Schema?,
        read: (any ProjectWriteTransaction) async throws -> Found, head: (Found) -> Int64,
        _ body: (Found, inout RecordWriter) async throws -> TransactionEnd<Value>
    ) async throws -> (value: Value, changes: [String: Int64]) {
        let (value, changes) = try await storage.withProjectWriteTransaction(project: project) {
            transaction -> TransactionEnd<(Value, [String: Int64])> in
            let found = try await read(transaction)
            var writer = RecordWriter(transaction, head: head(found), user: user, now: now, schema: schema)
            switch try await body(found, &writer) {
            case .commit(let value):
                try await writer.finish()
                return .commit((value, writer.changedCollections))
            case .rollback(let value):
                return .rollback((value, [:]))
            }
        }
        await notifier?.publish(project: project, changes: changes)
        return (value, changes)
    }
}
