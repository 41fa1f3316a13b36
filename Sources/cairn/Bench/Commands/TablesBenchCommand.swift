import ArgumentParser

/// `cairn bench tables`: collections in PostgreSQL tables against ordinary ones, and SQL writes reaching a device.
struct TablesBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tables",
        abstract: "Measure a collection kept in a PostgreSQL table against an ordinary one, and a SQL UPDATE reaching a device.",
        discussion: """
            Each round makes a project on the database with an ordinary collection and one in a table of its own (same \
            fields), starts `cairn serve --postgres`, pushes --records records into each in raw batches and pulls them \
            back, in alternating order. Then a `cairn sync --watch` child keeps a store in step while --samples records \
            are changed, alternately by a SQL UPDATE on the table and by a batch pushed over HTTP to the ordinary \
            collection (the yardstick); each is timed until the store holds it. Prints medians. The database gets a \
            project and a table (schema bench_tables) per round: give it one of its own.

            Example:
              swift run -c release cairn bench tables --postgres postgres://cairn@127.0.0.1/bench --json
            """)

    @Option(name: .long, help: "The PostgreSQL database (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE), or CAIRN_POSTGRES_URL.")
    var postgres: String?

    @Option(name: .long, help: "Records pushed and pulled per round and collection.")
    var records: Int = 20_000

    @Option(name: .long, help: "Operations per batch.")
    var batch: Int = 1000

    @Option(name: .long, help: "Records per pulled page.")
    var page: Int = 5000

    @Option(name: .long, help: "Rounds (the medians are reported).")
    var rounds: Int = 3

    @Option(name: .long, help: "Changes timed to the watching device, per kind.")
    var samples: Int = 30

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0, rounds > 0, samples > 0 else { throw ValidationError("--records, --rounds and --samples must be positive") }
        guard (1...1000).contains(batch), (1...10000).contains(page) else { throw ValidationError("--batch is 1 to 1000, --page 1 to 10000") }
        guard PostgresDatabase.url(postgres) != nil else {
            throw ValidationError("--postgres URL (or CAIRN_POSTGRES_URL) names the database to measure")
        }
    }

    func run() async throws {
        let url = PostgresDatabase.url(postgres) ?? ""
        let result = try await CLIError.wrap("the benchmark failed") {
            try await TablesBenchmark(
                postgresURL: url, records: records, batchSize: batch, pageSize: page, rounds: rounds, samples: samples
            ) { print($0) }.run()
        }
        output.printFigures(result)
    }
}
