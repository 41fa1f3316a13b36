/// A task on Swift's cooperative thread pool that sleeps 1 ms in a loop and keeps the longest it woke up late: run
/// beside a pull, that is the longest the app's other async work waited for a cooperative thread.
struct CooperativeProbe {
    private let task: Task<Duration, Never>

    /// Starts probing at once.
    init() {
        task = Task.detached {
            let clock = ContinuousClock()
            var longest = Duration.zero
            var last = clock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
                let now = clock.now
                longest = max(longest, now - last - .milliseconds(1))
                last = now
            }
            return longest
        }
    }

    /// Stops probing; returns the longest lateness in milliseconds.
    func stop() async -> Double {
        task.cancel()
        let longest = await task.value.components
        return Double(longest.seconds) * 1000 + Double(longest.attoseconds) / 1e15
    }
}
