import ArgumentParser

/// `cairn bench queries`: local reads and JSON caches, each beside raw GRDB doing the same work.
struct QueryBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queries",
        abstract: "Measure local queries, full-text search and JSON caches beside raw GRDB (no server needed).",
        discussion: """
            Fills local-only collections in a temporary store (and the same tables in a plain GRDB database), then \
            times indexed equality and range lookups, full-text searches, and caching JSON entries. Medians of 200 \
            runs. With --json the last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench queries --records 1000000 --json
            """)

    @Option(name: .long, help: "Rows of the indexed collection.")
    var records: Int = 1_000_000

    @Option(name: .long, help: "Rows of the full-text searched collection.")
    var searchRecords: Int = 100_000

    @Option(name: .long, help: "JSON entries to cache.")
    var cacheEntries: Int = 100_000

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records >= 100, searchRecords > 0, cacheEntries > 0 else {
            throw ValidationError("--records must be at least 100, and the other counts positive")
        }
    }

    func run() async throws {
        let result = try await QueryBenchmark(records: records, searchRecords: searchRecords, cacheEntries: cacheEntries) { print($0) }.run()
        output.printFigures(result)
    }
}
