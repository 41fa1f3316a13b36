import Foundation
import Synchronization

/// The store files this process has open, so that a rewrite (encrypt, decrypt, rekey) never renames a file under an
/// open store; and a check for other processes through SQLite's own lock on the WAL index.
enum OpenStoreFiles {
    private static let counts = Mutex<[String: Int]>([:])

    /// Held by an open store; counts its path while it lives.
    final class Lease: Sendable {
        let path: String
        /// The store cipher's registration of an encrypted store.
        let cipher: StoreCipherRegistration?

        init(path: String, cipher: StoreCipherRegistration?) {
            self.path = path
            self.cipher = cipher
            counts.withLock { $0[path, default: 0] += 1 }
        }

        private let ended = Mutex(false)

        /// Stops counting the path: the store's connections are closed. Later calls do nothing.
        func end() {
            guard ended.withLock({ ended in defer { ended = true }; return !ended }) else { return }
            let path = self.path
            counts.withLock { counts in
                let left = (counts[path] ?? 1) - 1
                counts[path] = left > 0 ? left : nil
            }
        }

        deinit { end() }
    }

    /// Throws `store_in_use` when this process or another has the store at `path` (an SQLite path) open.
    /// A store released just before may still be closing its connections (GRDB lets them go in the background), so
    /// this waits up to two seconds for this process's own leases to end.
    static func ensureClosed(_ path: String) throws {
        for _ in 0..<40 where counts.withLock({ $0[path] != nil }) { usleep(50_000) }
        if counts.withLock({ $0[path] != nil }) {
            throw CairnError(.storeInUse, "The store at \(path) is open in this app; close its clients first")
        }
        // Every SQLite connection to a WAL database holds a shared lock on byte 128 of its `-shm` file.
        let descriptor = open(path + "-shm", O_RDWR)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 128
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return }
        if lock.l_type != Int16(F_UNLCK) {
            throw CairnError(.storeInUse, "The store at \(path) is open in another process (pid \(lock.l_pid)); close it first")
        }
    }
}
