import ArgumentParser

/// `cairn bench backends`: the server's push and pull on SQLite and on PostgreSQL, side by side.
struct BackendBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backends",
        abstract: "Measure the server's push and pull on SQLite and on PostgreSQL in the same run.",
        discussion: """
            Each round starts `cairn serve` on a fresh SQLite data directory and on the PostgreSQL database (a new \
            project there), in alternating order, pushes --records records in raw batches and pulls them back in \
            pages. Prints the medians of --rounds. The database gets one project per round: give it one of its own.

            Example:
              swift run -c release cairn bench backends \\
                --postgres postgres://cairn@127.0.0.1/bench --json
            """)

    @OptionGroup var options: PostgresPushPullOptions

    @OptionGroup var output: JSONOutputOption

    func run() async throws {
        let result = try await CLIError.wrap("the benchmark failed") {
            try await BackendBenchmark(
                postgresURL: options.url, records: options.records, batchSize: options.batch, pageSize: options.page, rounds: options.rounds
            ) { print($0) }.run()
        }
        output.printFigures(result)
    }
}
