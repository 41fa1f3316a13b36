import Foundation

extension CairnClient {
    /// Connects the shared store's watcher and lease to this client (at init): another process's commit wakes a
    /// standing scheduler's take of the lease and, when changes wait for upload, the push of the scheduler that
    /// syncs, and the file uploads of the lease's holder; a lease gained or lost starts or stands down the scheduler
    /// (and a gain the file uploads), and a loss stops the sync under way.
    func watchOtherProcesses() {
        guard let shared else { return }
        shared.watcher.listen { [weak self] in self?.otherProcessCommitted() }
        shared.lease.onChange { [weak self] held in self?.syncLeaseChanged(held: held) }
    }

    private func otherProcessCommitted() {
        shared?.lease.retryStanding()
        // Files another process queued are sent by the process that syncs.
        if shared?.lease.isHeld == true {
            let uploader = fileUploader
            background.start { await uploader.kick() }
        }
        guard schedulerInput.withLock({ $0 != nil }), hasPendingUpload else { return }
        storeDidChangeExternally()
    }

    private func syncLeaseChanged(held: Bool) {
        _ = schedulerInput.withLock { $0?.yield(held ? .leaseTaken : .leaseHeldElsewhere) }
        if held {
            let uploader = fileUploader
            background.start { await uploader.leaseTaken() }
        } else {
            let engine = self.engine
            Task { await engine.cancelRunning() }
        }
    }
}
