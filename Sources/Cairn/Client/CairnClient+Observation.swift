import CairnProtocol
import Foundation
import GRDB

extension CairnClient {
    /// The records a query selects, now and after every local write or pulled page that changes them.
    ///
    /// ```swift
    /// for try await notes in client.observe(Query("notes").sorted(by: "due")) { render(notes) }
    /// ```
    public func observe(_ query: Query) -> AsyncThrowingStream<[LocalRecord], any Error> {
        let compiled: (sql: String, arguments: StatementArguments)
        do { compiled = try store.compile(query) } catch { return AsyncThrowingStream { $0.finish(throwing: error) } }
        let observation = ValueObservation.tracking { db in
            try LocalStore.fetchRecords(db, sql: compiled.sql, arguments: compiled.arguments)
        }.removeDuplicates()
        let writer = store.writer
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await records in observation.values(in: writer) { continuation.yield(records) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
