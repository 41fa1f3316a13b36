import ArgumentParser

/// `cairn bench encryption`: what a store key costs, plaintext and encrypted stores side by side.
struct EncryptionBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encryption",
        abstract: "Measure encrypted stores beside plaintext ones: initial pull, file download, indexed lookups, rekey.",
        discussion: """
            Starts `cairn serve` with --pull-records records and pulls them into fresh stores, plaintext and encrypted \
            in turn (medians of --rounds); downloads a --file-megabytes file into such stores' file caches the same \
            way; fills two local stores with --lookup-records records and times indexed \
            lookups in each; then re-keys the encrypted one. With --json the last line is one JSON object.

            Example:
              swift run -c release cairn bench encryption \\
                --pull-records 100000 --lookup-records 1000000 --json
            """)

    @Option(name: .long, help: "Records to pull from the server.")
    var pullRecords: Int = 100_000

    @Option(name: .long, help: "Local records to look up among.")
    var lookupRecords: Int = 1_000_000

    @Option(name: .long, help: "Size of the file to download, in MB.")
    var fileMegabytes: Int = 200

    @Option(name: .long, help: "Rounds of each measure (the median is reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard pullRecords > 0, lookupRecords > 0, fileMegabytes > 0, rounds > 0 else { throw ValidationError("the counts must be positive") }
    }

    func run() async throws {
        let result = try await EncryptionBenchmark(pullRecords: pullRecords, lookupRecords: lookupRecords, fileMegabytes: fileMegabytes, rounds: rounds) { print($0) }.run()
        output.printFigures(result)
    }
}
