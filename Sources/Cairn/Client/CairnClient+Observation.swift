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
        let store = self.store
        let observation = ValueObservation.tracking { db in try store.records(db, query) }.removeDuplicates()
        return values(of: observation)
    }

    /// How many records a query selects, now and after every change to that number.
    ///
    /// ```swift
    /// for try await open in client.observeCount(Query("notes").filter(\Note.done == false)) { badge(open) }
    /// ```
    public func observeCount(_ query: Query) -> AsyncThrowingStream<Int, any Error> {
        let store = self.store
        let observation = ValueObservation.tracking { db in try store.count(db, query) }.removeDuplicates()
        return values(of: observation)
    }

    /// The values of an observation of the local store, as a stream that ends when the task reading it is cancelled.
    func values<Reducer: ValueReducer>(of observation: ValueObservation<Reducer>) -> AsyncThrowingStream<Reducer.Value, any Error>
    where Reducer.Value: Sendable {
        let writer = store.writer
        // Other processes' commits reach the observation while it is read (SharedStore).
        let watching = shared?.watcher.hold()
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await value in observation.values(in: writer) { continuation.yield(value) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                task.cancel()
                watching?.release()
            }
        }
    }
}
