import ArgumentParser

/// `cairn bench events`: how many live-notice streams one server holds with notices still fast.
struct EventsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Measure how many live-notice streams one server instance holds with a notice latency p99 under one second.",
        discussion: """
            Starts `cairn serve` (SQLite, or PostgreSQL with --postgres), opens event streams in steps, and at each step \
            times --writes writes from the batch being sent to each stream receiving its notice. Stops at the first step \
            whose p99 reaches one second or that misses a notice. The streams are read in this process, on the same \
            machine, so the figure is a floor.

            Example:
              swift run -c release cairn bench events \\
                --steps 1000,2500,5000,7500,10000 --json
            """)

    @Option(name: .long, help: "A PostgreSQL database for the server (or CAIRN_POSTGRES_URL); SQLite without it.")
    var postgres: String?

    @Option(name: .long, help: "Stream counts to try, in order, comma-separated.")
    var steps: String = "1000,2500,5000,7500,10000"

    @Option(name: .long, help: "Writes timed at each step.")
    var writes: Int = 10

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard parsedSteps.count > 0, parsedSteps.allSatisfy({ $0 > 0 }) else { throw ValidationError("--steps is a list of positive counts") }
        guard writes > 0 else { throw ValidationError("--writes must be positive") }
    }

    var parsedSteps: [Int] { steps.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func run() async throws {
        let url = PostgresDatabase.url(postgres)
        let result = try await CLIError.wrap("the benchmark failed") {
            try await EventsBenchmark(postgresURL: url, steps: parsedSteps, writes: writes) { print($0) }.run()
        }
        output.printFigures(result)
    }
}
