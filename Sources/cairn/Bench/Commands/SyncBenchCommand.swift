import ArgumentParser
import Cairn

/// `cairn bench sync` (the default): sync throughput against a server on loopback.
struct SyncBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Measure sync throughput against a server on loopback (build with -c release for real figures).",
        discussion: """
            Starts `cairn serve` as a child process with a temporary data directory, pushes --records records of \
            about 500 bytes in batches, pulls them back in pages, then times small incremental pulls: through the \
            SDK with plain JSON, then again with gzip. Every rate is printed beside SQLite's own insert of the same \
            rows, measured in the same run. With --json the last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench --records 100000 --json
            """)

    @Option(name: .long, help: "How many records to push and pull.")
    var records: Int = 100_000

    @Option(name: .long, help: "Operations per batch.")
    var batch: Int = 1000

    @Option(name: .long, help: "Records per pulled page (the SDK's default).")
    var page: Int = CairnConfiguration.defaultPageSize

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0 else { throw ValidationError("--records must be positive") }
        guard (1...1000).contains(batch) else { throw ValidationError("--batch must be from 1 to 1000") }
        guard (1...10000).contains(page) else { throw ValidationError("--page must be from 1 to 10000") }
    }

    func run() async throws {
        let result = try await SyncBenchmark(records: records, batchSize: batch, pageSize: page) { print($0) }.run()
        output.printFigures(result)
    }
}
