import ArgumentParser

/// `cairn bench transports`: the SDK's HTTP transports side by side.
struct TransportsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transports",
        abstract: "Measure the SDK's HTTP transports side by side: push, pull, and a large file's upload and download.",
        discussion: """
            Starts `cairn serve` on loopback and, with each transport in turn (alternating order round by round), \
            pushes --records records, pulls as many into a fresh store, uploads a --file-megabytes file and downloads \
            it into a fresh store's cache. Prints one table of medians; with --json the last line is one JSON object.

            Example:
              swift run -c release cairn bench transports --records 50000 \\
                --file-megabytes 200 --json
            """)

    @Option(name: .long, help: "The transports to measure, comma-separated (asynchttpclient, urlsession); all built in by default.")
    var transport: String?

    @Option(name: .long, help: "Records pushed, and pulled, per round.")
    var records: Int = 50_000

    @Option(name: .long, help: "Size of the file to upload and download, in MB.")
    var fileMegabytes: Int = 200

    @Option(name: .long, help: "Rounds (the medians are reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    var transports: [BenchTransport] {
        guard let transport else { return BenchTransport.available }
        return transport.split(separator: ",").compactMap { BenchTransport(rawValue: $0.trimmingCharacters(in: .whitespaces).lowercased()) }
    }

    func validate() throws {
        guard records > 0, fileMegabytes > 0, rounds > 0 else { throw ValidationError("the counts must be positive") }
        let names = BenchTransport.available.map(\.rawValue).joined(separator: ", ")
        guard !transports.isEmpty, transports.allSatisfy(BenchTransport.available.contains) else {
            throw ValidationError("--transport takes \(names)")
        }
    }

    func run() async throws {
        let result = try await CLIError.wrap("the benchmark failed") {
            try await TransportBenchmark(transports: transports, records: records, fileMegabytes: fileMegabytes, rounds: rounds) { print($0) }.run()
        }
        output.printFigures(result)
    }
}
