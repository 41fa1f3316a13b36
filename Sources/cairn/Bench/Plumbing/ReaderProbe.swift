import Cairn
import Foundation

/// Reads one record by id every millisecond, in the background, and keeps how long each read took: run beside a
/// pull, its longest read is the longest the app's reads were held up.
struct ReaderProbe {
    /// Read latencies in milliseconds.
    struct Latencies {
        var samples: [Double]
        var count: Int { samples.count }
        var median: Double { samples.isEmpty ? 0 : samples.sorted()[samples.count / 2] }
        var longest: Double { samples.max() ?? 0 }
    }

    private let task: Task<[Double], Never>

    init(client: CairnClient, collection: String = "items", records: Int) {
        task = Task.detached {
            var samples: [Double] = []
            var index = 0
            while !Task.isCancelled {
                let start = ContinuousClock.now
                _ = try? client.record(collection, id: "item-\(index % max(records, 1))")
                samples.append(BenchTiming.seconds(since: start) * 1000)
                index += 7919
                try? await Task.sleep(for: .milliseconds(1))
            }
            return samples
        }
    }

    /// Stops reading and returns the latencies.
    func stop() async -> Latencies {
        task.cancel()
        return Latencies(samples: await task.value)
    }
}
