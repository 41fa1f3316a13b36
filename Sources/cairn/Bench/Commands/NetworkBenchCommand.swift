import ArgumentParser
import CairnLinkShaping

/// `cairn bench network`: a first sync over a shaped link, with and without compression.
struct NetworkBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Measure a first sync over a slow link: bytes on the wire, time, and the time the link needs for them.",
        discussion: """
            Starts `cairn serve` on loopback with --records records of varied field notes (about 500 bytes each), then \
            runs first syncs into fresh stores through a proxy shaped like --link: RATE[/UPRATE],LATENCY[,loss=PERCENT], \
            the latency a round trip (20mbit,60ms: 20 Mbit/s each way, 30 ms each way). Each round syncs once with gzip \
            and once without, alternating which goes first. It prints the bytes each way, the time, and the ideal time: \
            the bytes at the link's rate plus the round trips the protocol cannot overlap (the handshake, each request \
            that is not a page, each collection's first page). With --json the last line is one JSON object of medians.

            Example:
              swift run -c release cairn bench network --link 20mbit,60ms \\
                --records 100000 --json
            """)

    @Option(name: .long, help: "The link: RATE[/UPRATE],LATENCY[,loss=PERCENT], such as 20mbit,60ms or 5mbit/1mbit,150ms.")
    var link: String = "20mbit,60ms"

    @Option(name: .long, help: "Records in the first sync.")
    var records: Int = 20_000

    @Option(name: .long, help: "Rounds of one gzip and one plain sync each (the medians are reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0 else { throw ValidationError("--records must be positive") }
        guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
        do { _ = try LinkProfile(parsing: link) } catch { throw ValidationError("--link: \(error)") }
    }

    func run() async throws {
        let result = try await NetworkBenchmark(records: records, link: try LinkProfile(parsing: link), rounds: rounds) { print($0) }.run()
        output.printFigures(result)
    }
}
