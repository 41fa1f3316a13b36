import Synchronization

/// How many records to ask for per page, from what the pages so far showed of the link: on a link with long round
/// trips, pages grow until a page's body takes at least two round trips to arrive, so that the next page (asked for
/// when this one's head arrives) is ready before the link falls idle. Pages never go below the configured size nor
/// above the server's largest (10,000).
///
/// The round trip is the wait for a page's head less the time the server says it spent reading it
/// (`Server-Timing: feed;dur=...`), the smallest seen (queues only ever add to it); the rate is the records of the
/// last page over the time its body took. A round trip under ``negligibleRoundTrip`` (loopback, a LAN) changes
/// nothing: writing a page takes longer than that, and larger pages would only raise the memory a pull holds.
///
/// ```swift
/// let sizer = PageSizer(base: 2000)
/// sizer.observe(records: 2000, headWait: .milliseconds(70), serverTime: .milliseconds(10), body: .milliseconds(20))
/// sizer.limit    // 10000: 2000 records arrive in 20 ms, and a round trip is 60 ms
/// ```
final class PageSizer: Sendable {
    /// The largest page the server gives.
    static let largest = 10_000
    /// Round trips shorter than this never grow pages.
    static let negligibleRoundTrip = Duration.milliseconds(2)

    private struct State {
        var limit: Int
        var roundTrip: Duration?
    }

    /// The configured page size: the smallest page asked for.
    let base: Int
    /// False: pages stay at ``base`` whatever the link (``CairnConfiguration/adaptsPageSize``).
    let adapts: Bool
    private let state: Mutex<State>

    init(base: Int, adapts: Bool = true) {
        self.base = min(max(base, 1), Self.largest)
        self.adapts = adapts
        state = Mutex(State(limit: self.base))
    }

    /// The records to ask for in the next page.
    var limit: Int { state.withLock { $0.limit } }

    /// How many pages the pull may have downloading ahead of the one it writes: two on a link whose round trip is
    /// not negligible (the link keeps carrying a page while the device writes another), else one (memory stays at
    /// two pages).
    var pagesAhead: Int {
        guard let roundTrip, roundTrip >= Self.negligibleRoundTrip else { return 1 }
        return 2
    }

    /// The link's round trip as measured so far, if any page told the server's time.
    var roundTrip: Duration? { state.withLock { $0.roundTrip } }

    /// Learns from one page: it held `records`, its head came `headWait` after it was asked for, of which the server
    /// said it spent `serverTime` (`nil` when it did not say: nothing is learnt), and its body took `body` after the
    /// head.
    func observe(records: Int, headWait: Duration, serverTime: Duration?, body: Duration) {
        guard adapts, let serverTime, records > 0 else { return }
        let trip = max(headWait - serverTime, .zero)
        state.withLock { state in
            let roundTrip = min(state.roundTrip ?? trip, trip)
            state.roundTrip = roundTrip
            guard roundTrip >= Self.negligibleRoundTrip else { return }
            // Records per second of this page's body; a body that arrived with its head fills any page at once.
            let seconds = body.timeInterval
            let needed = seconds > 0 ? Double(records) * 2 * roundTrip.timeInterval / seconds : Double(Self.largest)
            state.limit = min(Self.largest, max(state.limit, base, Int(needed.rounded(.up))))
        }
    }
}
