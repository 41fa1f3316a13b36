import Cairn
import CairnProtocol
import Foundation

extension SyncBenchmark {
    /// The cooperative thread pool during a long pull: a ``CooperativeProbe`` runs while a fresh store pulls the
    /// plain run's records, then alone for as long, the yardstick of what the machine's scheduler costs by itself.
    /// The server is another process, so only the client's work shares this process's cooperative threads.
    func measureCooperativePool(server: ServerProcess, directory: URL) async throws -> [String: JSONValue] {
        let client = try await openClient("prober-items", compression: false, server: server, directory: directory)
        let start = ContinuousClock.now
        let probe = CooperativeProbe()
        let pulled = try await client.pull(["items"]).pulled
        let duringPull = await probe.stop()
        let pullDuration = ContinuousClock.now - start
        try await client.close()
        guard pulled == records else { throw CLIError("pulled \(pulled) of \(records)") }

        let idle = CooperativeProbe()
        try await Task.sleep(for: pullDuration)
        let duringIdle = await idle.stop()
        log(String(format: "cooperative pool: a task sleeping 1 ms in a loop woke up at most %.1f ms late during a pull of %d records, "
                   + "%.1f ms late in an idle run as long", duringPull, records, duringIdle))
        return [
            "pullCooperativeProbeLongestDelayMilliseconds": .number(BenchTiming.rounded(duringPull)),
            "idleCooperativeProbeLongestDelayMilliseconds": .number(BenchTiming.rounded(duringIdle)),
        ]
    }
}
