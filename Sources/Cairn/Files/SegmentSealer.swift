import Dispatch
import Foundation
import Synchronization

/// Seals the whole segments of a file being written on a queue of its own, in order, while the writer goes on
/// receiving: on a machine where receiving, hashing and encrypting would otherwise take turns, encryption runs
/// beside them. At most ``depth`` segments wait, so a fast sender never piles them up in memory.
final class SegmentSealer: Sendable {
    static let depth = 4

    private let handle: FileHandle
    private let sealing: FileSealing
    private let fileID: Data
    private let queue = DispatchQueue(label: "cairn.segment-sealer")
    private let slots = DispatchSemaphore(value: depth)
    private let failure = Mutex<CairnError?>(nil)

    init(handle: FileHandle, sealing: FileSealing, fileID: Data) {
        self.handle = handle
        self.sealing = sealing
        self.fileID = fileID
    }

    /// Queues segment `index` (not the last one); throws the error an earlier segment met, if any.
    func seal(_ segment: Data, index: Int64) throws {
        if let error = failure.withLock({ $0 }) { throw error }
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard failure.withLock({ $0 }) == nil else { return }
            do {
                try handle.write(contentsOf: try SealedFile.seal(segment, fileID: fileID, index: index, isLast: false, with: sealing))
            } catch {
                failure.withLock { $0 = CairnError(.storeFailed, "A downloaded segment could not be written", cause: error) }
            }
        }
    }

    /// Waits until every queued segment is written; throws the first error one met.
    func finish() throws {
        queue.sync {}
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
