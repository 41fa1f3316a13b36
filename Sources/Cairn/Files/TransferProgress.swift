import Synchronization

/// Shows file transfers in the status while they run.
///
/// Each progress report runs in a task of its own, so one may arrive after its transfer ended. Whether a report still
/// counts is judged in the same turn on the status as the transfer's end: a late report never shows a finished
/// transfer again, and a transfer never stays shown after it ended, whether it succeeded or failed.
final class TransferProgress: Sendable {
    private let status: StatusCenter
    /// The ids of the transfers under way.
    private let running = Mutex<Set<String>>([])

    init(status: StatusCenter) {
        self.status = status
    }

    /// The transfer of `id` starts: its reports count from now on.
    func begin(_ id: String) {
        running.withLock { _ = $0.insert(id) }
    }

    /// Shows `transfer` of `id` while it runs, never moving its progress back (``SyncStatus/noteFileTransfer(_:_:)``).
    func report(_ id: String, _ transfer: FileTransfer) async {
        await status.update { status in
            guard self.running.withLock({ $0.contains(id) }) else { return }
            status.noteFileTransfer(id, transfer)
        }
    }

    /// The transfer of `id` ended: it leaves the status, and its later reports are ignored.
    func end(_ id: String) async {
        await status.update { status in
            self.running.withLock { _ = $0.remove(id) }
            status.fileTransfers[id] = nil
        }
    }
}
