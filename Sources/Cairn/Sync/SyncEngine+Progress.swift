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

    /// A collection or download query starts pulling: its total is unknown until a snapshot's first page says it.
    func beginDownloadProgress() async {
        downloadMeter = TransferMeter(priorRate: await status.status.lastDownloadRate)
        let estimate = downloadMeter?.estimate
        await status.update { $0.download = estimate }
    }

    /// A page was applied: `changes` more, and the snapshot's size when this page says it.
    func noteDownloadProgress(_ changes: Int, total: Int?) async {
        if let total { downloadMeter?.total = total }
        downloadMeter?.done += changes
        let estimate = downloadMeter?.estimate
        await status.update { $0.download = estimate }
    }

    /// The run ended: no estimate is shown until the next one.
    func endProgress() async {
        uploadMeter = nil
        downloadMeter = nil
        await status.update {
            $0.upload = nil
            $0.download = nil
        }
    }
}
