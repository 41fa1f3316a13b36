import CairnProtocol
import Foundation
import GRDB

extension CairnClient {
    /// A ``LiveQuery`` of the records `query` selects, decoded as `T` (the record's id is offered as its `id` member).
    ///
    /// ```swift
    /// let notes = client.liveQuery(Query("notes").sorted(by: "due"), as: Note.self)
    /// notes.query = Query("notes").matching("exit")   // from a search field: the list follows
    /// ```
    public func liveQuery<T: Decodable & Sendable>(
        _ query: Query, as type: T.Type, delivery: LiveQueryDelivery = .mainActor
    ) -> LiveQuery<T> {
        LiveQuery(store: store, watcher: shared?.watcher, query: query, delivery: delivery) { try Self.decode(type, $0) }
    }

    /// A ``LiveQuery`` of the records `query` selects, as ``LocalRecord``s.
    public func liveQuery(_ query: Query, delivery: LiveQueryDelivery = .mainActor) -> LiveQuery<LocalRecord> {
        LiveQuery(store: store, watcher: shared?.watcher, query: query, delivery: delivery) { $0 }
    }

    /// The records a query selects, decoded as `T`, now and after every change: a sequence for SwiftUI's `.task` or
    /// any loop; it ends when the task reading it is cancelled.
    ///
    /// ```swift
    /// .task { for try await notes in client.observe(Query("notes"), as: Note.self) { self.notes = notes } }
    /// ```
    public func observe<T: Decodable & Sendable>(_ query: Query, as type: T.Type) -> AsyncThrowingStream<[T], any Error> {
        let store = self.store
        let observation = ValueObservation.tracking { db in try store.records(db, query) }
            .removeDuplicates().map { rows in try rows.map { try Self.decode(type, $0) } }
        return values(of: observation)
    }
}
