import Foundation

/// Timing helpers of the benchmarks: elapsed seconds and medians of repeated runs.
enum BenchTiming {
    /// Seconds since `start`.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        seconds(ContinuousClock.now - start)
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Runs `body` `count` times (after one warm-up run) and returns the median in milliseconds.
    static func medianMilliseconds(_ count: Int, _ body: (Int) throws -> Void) rethrows -> Double {
        try body(0)
        var samples: [Double] = []
        for round in 0..<count {
            let start = ContinuousClock.now
            try body(round)
            samples.append(seconds(since: start) * 1000)
        }
        return samples.sorted()[samples.count / 2]
    }

    /// A figure rounded to three decimals, for the JSON line.
    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
