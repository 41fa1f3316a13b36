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

    @OptionGroup var options: PostgresPushPullOptions

    @Option(name: .long, help: "Changes timed to the watching device, per kind.")
    var samples: Int = 30

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard samples > 0 else { throw ValidationError("--samples must be positive") }
    }

    func run() async throws {
        let result = try await CLIError.wrap("the benchmark failed") {
            try await TablesBenchmark(
                postgresURL: options.url, records: options.records, batchSize: options.batch, pageSize: options.page, rounds: options.rounds,
                samples: samples
            ) { print($0) }.run()
        }
        output.printFigures(result)
    }
}
