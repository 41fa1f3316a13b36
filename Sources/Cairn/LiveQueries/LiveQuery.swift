import CairnProtocol
import Dispatch
import Foundation
import GRDB
import Observation
import Synchronization

/// The records a query selects, kept current for SwiftUI and any other Observation client: ``records``, ``count`` and
/// ``error`` change after every local write, pulled page or write by another process that changes them.
///
/// Make one with ``CairnClient/liveQuery(_:as:delivery:)``. It reads the store only while someone looks: the first
/// read of ``records``, ``count`` or ``error`` starts it, and ``cancel()`` or the object's end stops it. Every
/// committed transaction yields at most one update, computed off the main thread, and an update that changes nothing
/// is dropped. By default updates are delivered on the main actor, as SwiftUI wants.
///
/// ```swift
/// struct Note: Codable, Sendable, Identifiable { var id: String?; var title: String }
///
/// struct NotesList: View {
///     @State var notes: LiveQuery<Note>
///     var body: some View {
///         List(notes.records, id: \.id) { Text($0.title) }
///             .overlay { if let error = notes.error { Text(error.message) } }
///     }
/// }
/// ```
public final class LiveQuery<Element: Sendable>: Observable, Sendable {
    /// The query being observed; setting it (for example from a search field) restarts the observation at once.
    public var query: Query {
        get { registrar.access(self, keyPath: \.query); return state.withLock { $0.query } }
        set {
            registrar.withMutation(of: self, keyPath: \.query) { state.withLock { $0.query = newValue } }
            restartIfStarted()
        }
    }

    /// The records the query selects, decoded, in the query's order; empty until the first read completes.
    public var records: [Element] {
        registrar.access(self, keyPath: \.records)
        startIfNeeded()
        return state.withLock { $0.records }
    }

    /// How many records match the query's filter and search, ignoring its limit and offset ("50 of 1,234").
    public var count: Int {
        registrar.access(self, keyPath: \.count)
        startIfNeeded()
        return state.withLock { $0.count }
    }

    /// Why the last read failed (a record that does not decode, a query naming an unknown collection), or `nil`.
    /// The previous records stay in place while it is set.
    public var error: CairnError? {
        registrar.access(self, keyPath: \.error)
        startIfNeeded()
        return state.withLock { $0.error }
    }

    /// Whether a first read has completed.
    public var isLoaded: Bool {
        registrar.access(self, keyPath: \.isLoaded)
        startIfNeeded()
        return state.withLock { $0.isLoaded }
    }

    /// Stops observing the store: no update follows, and nothing runs again unless ``query`` is set or a property is
    /// read. Dropping the last reference does the same.
    public func cancel() {
        let (running, watching) = state.withLock { state -> (AnyDatabaseCancellable?, StoreChangeWatcher.Hold?) in
            defer { state.running = nil; state.watching = nil }
            state.generation += 1
            return (state.running, state.watching)
        }
        running?.cancel()
        watching?.release()
    }

    deinit {
        let (running, watching) = state.withLock { ($0.running, $0.watching) }
        running?.cancel()
        watching?.release()
    }

    // MARK: Internals

    private struct State: @unchecked Sendable {
        var query: Query
        var records: [Element] = []
        /// The rows ``records`` were decoded from (elements need not be `Equatable`).
        var rows: [LocalRecord] = []
        var count = 0
        var error: CairnError?
        var isLoaded = false
        /// The running database observation, while started.
        var running: AnyDatabaseCancellable?
        /// Keeps the store's watcher looking for other processes' commits while started.
        var watching: StoreChangeWatcher.Hold?
        /// Counts starts and cancellations, so a late value of a stopped observation is dropped.
        var generation = 0
        /// How many times the query ran (tests check that an unobserved live query costs nothing).
        var reads = 0
        /// How many updates were published.
        var updates = 0
    }

    private let registrar = ObservationRegistrar()
    private let state: Mutex<State>
    private let store: LocalStore
    /// Notices other processes' writes to a file store (nil in memory).
    private let watcher: StoreChangeWatcher?
    private let delivery: LiveQueryDelivery
    private let decode: @Sendable (LocalRecord) throws -> Element

    init(
        store: LocalStore, watcher: StoreChangeWatcher?, query: Query, delivery: LiveQueryDelivery,
        decode: @escaping @Sendable (LocalRecord) throws -> Element
    ) {
        self.store = store
        self.watcher = watcher
        self.delivery = delivery
        self.decode = decode
        self.state = Mutex(State(query: query))
    }

    /// How many times the query has run so far.
    var readCount: Int { state.withLock { $0.reads } }
    /// How many updates have been published so far.
    var updateCount: Int { state.withLock { $0.updates } }

    private func startIfNeeded() {
        guard state.withLock({ $0.running == nil }) else { return }
        start()
    }

    private func restartIfStarted() {
        guard state.withLock({ $0.running != nil }) else { return }
        cancel()
        start()
    }

    private func start() {
        let (query, generation) = state.withLock { state -> (Query, Int) in
            state.generation += 1
            return (state.query, state.generation)
        }
        let observation = ValueObservation.tracking { [store, decode, weak self] db -> Snapshot in
            self?.state.withLock { $0.reads += 1 }
            return try Snapshot.read(db, store: store, query: query, decode: decode)
        }.removeDuplicates()
        let queue = delivery.queue
        let cancellable = observation.start(
            in: store.writer,
            scheduling: .async(onQueue: queue),
            onError: { [weak self] error in self?.publish(.failure(CairnError(wrapping: error)), generation: generation) },
            onChange: { [weak self] snapshot in self?.publish(.success(snapshot), generation: generation) })
        let watching = watcher?.hold()
        let stale = state.withLock { state -> Bool in
            guard state.generation == generation else { return true }
            state.running = cancellable
            state.watching = watching
            return false
        }
        if stale {
            cancellable.cancel()
            watching?.release()
        }
    }

    private func publish(_ result: Result<Snapshot, CairnError>, generation: Int) {
        guard state.withLock({ $0.generation == generation }) else { return }
        switch result {
        case .success(let snapshot):
            let (recordsChanged, countChanged, wasFailing, wasLoaded) = state.withLock { state in
                (!state.isLoaded || state.rows != snapshot.rows, state.count != snapshot.count, state.error != nil, state.isLoaded)
            }
            if recordsChanged {
                registrar.withMutation(of: self, keyPath: \.records) {
                    state.withLock { $0.records = snapshot.records; $0.rows = snapshot.rows }
                }
            }
            if countChanged { registrar.withMutation(of: self, keyPath: \.count) { state.withLock { $0.count = snapshot.count } } }
            if wasFailing { registrar.withMutation(of: self, keyPath: \.error) { state.withLock { $0.error = nil } } }
            if !wasLoaded { registrar.withMutation(of: self, keyPath: \.isLoaded) { state.withLock { $0.isLoaded = true } } }
            state.withLock { $0.updates += 1 }
        case .failure(let failure):
            registrar.withMutation(of: self, keyPath: \.error) { state.withLock { $0.error = failure } }
        }
    }

    /// One read of the query: what the database returned, decoded.
    private struct Snapshot: @unchecked Sendable, Equatable {
        var rows: [LocalRecord]
        var records: [Element]
        var count: Int

        /// Snapshots compare by rows, not elements, which need not be `Equatable`.
        static func == (left: Snapshot, right: Snapshot) -> Bool { left.rows == right.rows && left.count == right.count }

        static func read(_ db: Database, store: LocalStore, query: Query,
                         decode: (LocalRecord) throws -> Element) throws -> Snapshot {
            let rows = try store.records(db, query)
            var whole = query
            whole.limit = nil
            whole.offset = nil
            let count = try store.count(db, whole)
            return Snapshot(rows: rows, records: try rows.map(decode), count: count)
        }
    }
}

/// Where a ``LiveQuery`` changes its properties.
public enum LiveQueryDelivery: Sendable {
    /// On the main actor (the main queue): what SwiftUI and UIKit views need.
    case mainActor
    /// On a serial queue of Cairn's, as soon as a read completes: for code off the main actor.
    case immediate

    var queue: DispatchQueue {
        switch self {
        case .mainActor: .main
        case .immediate: Self.immediateQueue
        }
    }

    /// Where ``immediate`` updates land: one serial queue for every live query.
    private static let immediateQueue = DispatchQueue(label: "cairn.live-query")
}
