import ArgumentParser

/// `cairn bench process`: a whole `cairn sync` first sync, as a process, beside SQLite's floor.
struct ProcessBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Measure a whole `cairn sync` first sync, as its own process, beside SQLite inserting the same rows.",
        discussion: """
            Starts `cairn serve` on loopback with --records records (the sync bench's), then each round runs \
            `cairn sync --timings` into a fresh store and, in alternating order, SQLite's C API inserting the same \
            rows in one transaction (the floor). Prints the medians: the process's wall time, the floor's, the ratio \
            of their rates, and where the process's time went: opening the store (signing in, the schema), the sync \
            to its first page, the pages, after the last page, and start-up and exit (the wall time the process did \
            not see). With --json the last line is one JSON object.

            Example:
              swift run -c release cairn bench process --records 100000 --json
            """)

    @Option(name: .long, help: "Records in the first sync.")
    var records: Int = 100_000

    @Option(name: .long, help: "Rounds (the medians are reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0, rounds > 0 else { throw ValidationError("--records and --rounds must be positive") }
    }

    func run() async throws {
        let result = try await ProcessBenchmark(records: records, rounds: rounds) { print($0) }.run()
        output.printFigures(result)
    }
}
