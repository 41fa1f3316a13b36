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

    @Option(name: .long, help: "The PostgreSQL database to fill (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE), or CAIRN_POSTGRES_URL.")
    var postgres: String?

    @Option(name: .long, help: "Records pushed and pulled per round and backend.")
    var records: Int = 50_000

    @Option(name: .long, help: "Operations per batch.")
    var batch: Int = 1000

    @Option(name: .long, help: "Records per pulled page.")
    var page: Int = 5000

    @Option(name: .long, help: "Rounds (the medians are reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0, rounds > 0 else { throw ValidationError("--records and --rounds must be positive") }
        guard (1...1000).contains(batch), (1...10000).contains(page) else { throw ValidationError("--batch is 1 to 1000, --page 1 to 10000") }
        guard PostgresDatabase.url(postgres) != nil else {
            throw ValidationError("--postgres URL (or CAIRN_POSTGRES_URL) names the database to measure")
        }
    }

    func run() async throws {
        let url = PostgresDatabase.url(postgres) ?? ""
        let result = try await CLIError.wrap("the benchmark failed") {
            try await BackendBenchmark(postgresURL: url, records: records, batchSize: batch, pageSize: page, rounds: rounds) { print($0) }.run()
        }
        output.printFigures(result)
    }
}
