import ArgumentParser

/// `cairn bench webhooks`: what one webhook costs pushes, and how soon a change reaches its receiver.
struct WebhooksBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Measure push throughput with one webhook against none, and the time from a push to its delivery.",
        discussion: """
            Starts `cairn serve` on a fresh data directory and a receiver in this process. Pushes --records records over \
            raw HTTP per round, alternating rounds without and with a webhook (medians of --rounds each), then times \
            --samples single-record pushes from the push being sent to the receiver holding the change, beside the push's \
            own round trip.

            Example:
              swift run -c release cairn bench webhooks --records 20000 --rounds 3 --json
            """)

    @Option(name: .long, help: "Records pushed per round.")
    var records: Int = 20_000

    @Option(name: .long, help: "Records per batch.")
    var batchSize: Int = 1000

    @Option(name: .long, help: "Rounds of each kind (without, with a webhook), alternating.")
    var rounds: Int = 3

    @Option(name: .long, help: "Single-record pushes timed to their delivery.")
    var samples: Int = 50

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0, batchSize > 0, rounds > 0, samples > 0 else { throw ValidationError("every count must be positive") }
    }

    func run() async throws {
        let result = try await CLIError.wrap("the benchmark failed") {
            try await WebhookBenchmark(records: records, batchSize: batchSize, rounds: rounds, latencySamples: samples) { print($0) }.run()
        }
        output.printFigures(result)
    }
}
