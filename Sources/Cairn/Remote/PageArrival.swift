import CairnProtocol
import Foundation
import Synchronization

/// A changes page as it arrived: its body, and how long its head and its body took (what ``PageSizer`` learns the
/// link from).
struct PageArrival: Sendable {
    var body: Data
    /// From asking to the head's arrival (`nil` when the transport does not tell heads).
    var headWait: Duration?
    /// What the server said it spent on the page (`Server-Timing: feed;dur=...`).
    var serverTime: Duration?
    /// From the head's arrival to the body's end.
    var bodyTime: Duration?

    /// Times one request: started when made, its head noted by the transport's head callback.
    final class Timing: Sendable {
        private let start = ContinuousClock.now
        private let head = Mutex<(at: ContinuousClock.Instant, serverTime: Duration?)?>(nil)

        /// The answer's head arrived now, with this `Server-Timing` value. A retried request keeps its last head.
        func headArrived(serverTiming: String?) {
            let milliseconds = ServerTiming.milliseconds(CairnHeader.feedTimingMetric, in: serverTiming)
            head.withLock { $0 = (ContinuousClock.now, milliseconds.map { .microseconds(Int64(($0 * 1000).rounded())) }) }
        }

        /// The page whose body just ended.
        func arrived(_ body: Data) -> PageArrival {
            let end = ContinuousClock.now
            guard let head = head.withLock({ $0 }) else { return PageArrival(body: body) }
            return PageArrival(body: body, headWait: head.at - start, serverTime: head.serverTime, bodyTime: end - head.at)
        }
    }
}
