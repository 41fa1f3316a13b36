import ArgumentParser

/// `cairn bench`: the benchmarks (sync by default, `queries` for local reads and caches).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Cairn (build with -c release for real figures).",
        subcommands: [
            SyncBenchCommand.self, QueryBenchCommand.self, LiveBenchCommand.self, EncryptionBenchCommand.self, BackendBenchCommand.self,
            EventsBenchCommand.self, RulesBenchCommand.self, TransportsBenchCommand.self, NetworkBenchCommand.self, WebhooksBenchCommand.self, TablesBenchCommand.self,
            ProcessBenchCommand.self, ChaosBenchCommand.self,
        ],
        defaultSubcommand: SyncBenchCommand.self)
}
