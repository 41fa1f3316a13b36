import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Takes SQLite's WAL checkpoints out of the writer's commits. SQLite's automatic checkpoint copies the WAL into the
/// database file inside the commit that crosses a thousand pages: a server writer holding its write gate paid for it
/// about one commit in three of a busy push. Installed on the writer connection, this hook instead asks for a passive
/// checkpoint on a connection of the checkpointer's own, in the background, and the writer goes on.
///
/// When the WAL reaches `backstop` pages (the background fell behind, or a reader held old pages), the writer
/// checkpoints itself after its commit, as SQLite would: the WAL stays bounded.
///
/// ```swift
/// let checkpointer = try BackgroundCheckpointer(path: path)
/// pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
/// // ...
/// checkpointer.close()
/// ```
package final class BackgroundCheckpointer: Sendable {
    /// SQLite's automatic checkpoint size, in pages: what a writer whose checkpointer is gone falls back to.
    package static let sqliteThreshold: Int32 = 1000
    /// WAL pages after a commit that start a background checkpoint.
    package let threshold: Int32
    /// WAL pages after a commit that make the writer checkpoint itself.
    package let backstop: Int32
    private let connection: DatabaseQueue
    private let state = Mutex(State())
    /// Runs the checkpoints, one at a time, off the writer's and Swift concurrency's threads.
    private let queue = DispatchQueue(label: "cairn.checkpoint")

    private struct State {
        var running = false
        var again = false
        var closed = false
        var completed = 0
    }

    /// The checkpointers alive, by number (a WAL hook's context).
    private static let live = Mutex<[Int: WeakReference]>([:])
    private static let numbers = Atomic<Int>(1)
    private struct WeakReference: Sendable { weak var checkpointer: BackgroundCheckpointer? }
    /// This checkpointer's number in ``live``.
    private let number: Int

    /// A checkpointer of the database at `path`, with a connection of its own opened with `configuration` (the
    /// writer's: a store cipher's or suspension's setup applies to it too); `threshold` and `backstop` in pages.
    package init(path: String, configuration: Configuration = Configuration(), threshold: Int32 = sqliteThreshold, backstop: Int32 = 10_000) throws {
        self.threshold = threshold
        self.backstop = backstop
        var configuration = configuration
        configuration.label = "cairn.checkpoint"
        connection = try DatabaseQueue(path: path, configuration: configuration)
        number = Self.numbers.wrappingAdd(1, ordering: .relaxed).oldValue
        Self.live.withLock { $0[number] = WeakReference(checkpointer: self) }
    }

    deinit {
        Self.live.withLock { $0[number] = nil }
    }

    /// Replaces SQLite's automatic checkpoint on the writer connection `db` (its WAL hook) with this checkpointer.
    /// The writer may outlive the checkpointer: the hook finds it by number, and once it is gone checkpoints as
    /// SQLite would.
    package func install(on db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, { context, handle, _, pages in
            let checkpointer = BackgroundCheckpointer.live.withLock { $0[Int(bitPattern: context)]?.checkpointer }
            if pages >= checkpointer?.backstop ?? BackgroundCheckpointer.sqliteThreshold {
                sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            } else if let checkpointer, pages >= checkpointer.threshold {
                checkpointer.request()
            }
            return SQLITE_OK
        }, UnsafeMutableRawPointer(bitPattern: number))
    }

    /// Asks for a checkpoint: one starts now, or once the one running ends.
    package func request() {
        let start = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// How many background checkpoints have run.
    package var completedCheckpoints: Int { state.withLock(\.completed) }

    /// Stops asking for checkpoints, waits for the one running and closes the checkpointer's connection (the
    /// database's last connection to close then checkpoints it whole, as SQLite does).
    package func close() {
        state.withLock { $0.closed = true }
        queue.sync {}
        try? connection.close()
    }

    private func drain() {
        while true {
            // A passive checkpoint waits for nobody: it copies what no reader still needs and leaves the rest for later.
            try? connection.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
            let again = state.withLock { state -> Bool in
                state.completed += 1
                if state.again, !state.closed {
                    state.again = false
                    return true
                }
                state.running = false
                return false
            }
            if !again { return }
        }
    }
}
