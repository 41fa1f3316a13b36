import Foundation

/// The running push's and pull's progress in the status, with the time left at the rate measured so far.
struct TransferMeter: Sendable {
    var started = ContinuousClock.now
    var done = 0
    var total: Int?
    /// The rate an earlier run measured, used until this one measures its own.
    var priorRate: Double?

    var estimate: TransferEstimate {
        var estimate = TransferEstimate(done: done, total: total, elapsed: ContinuousClock.now - started)
        if estimate.perSecond == nil { estimate.perSecond = priorRate }
        return estimate
    }

}

extension SyncEngine {
    /// A push starts: what the queue holds now is its total.
    func beginUploadProgress() async {
        let total = (try? await store.offPool { try $0.uploads.counts().pending }) ?? nil
        uploadMeter = TransferMeter(total: total, priorRate: await status.status.lastUploadRate)
        let estimate = uploadMeter?.estimate
        await status.update { $0.upload = estimate }
    }

    /// `count` more operations were answered.
    func noteUploadProgress(_ count: Int) async {
        uploadMeter?.done += count
        let estimate = uploadMeter?.estimate
        await status.update { $0.upload = estimate }
    }

    /// A collection or download query of `collection` starts pulling: its total is unknown until a snapshot's first
    /// page says it. Pulling one at a time, its meter replaces the one before; pulling several at once, it joins
    /// them and the status shows their sum.
    func beginDownloadProgress(of collection: String) async {
        let meter = TransferMeter(priorRate: await status.status.lastDownloadRate)
        if configuration.downloadConcurrency > 1 { downloadMeters[collection] = meter } else { downloadMeters = [collection: meter] }
        await showDownloadProgress()
    }

    /// A page of `collection` was applied: `changes` more, and the snapshot's size when this page says it.
    func noteDownloadProgress(_ changes: Int, total: Int?, of collection: String) async {
        if let total { downloadMeters[collection]?.total = total }
        downloadMeters[collection]?.done += changes
        await showDownloadProgress()
    }

    /// The status's download estimate: the one meter's, or the sum of the meters of collections pulled at once.
    private func showDownloadProgress() async {
        let meters = Array(downloadMeters.values)
        var sum: TransferMeter?
        if let first = meters.first {
            var combined = first
            for meter in meters.dropFirst() {
                combined.started = min(combined.started, meter.started)
                combined.done += meter.done
                combined.total = combined.total.flatMap { total in meter.total.map { total + $0 } }
            }
            sum = combined
        }
        let estimate = sum?.estimate
        await status.update { $0.download = estimate }
    }

    /// The run ended: no estimate is shown until the next one.
    func endProgress() async {
        uploadMeter = nil
        downloadMeters = [:]
        await status.update {
            $0.upload = nil
            $0.download = nil
        }
    }
}
