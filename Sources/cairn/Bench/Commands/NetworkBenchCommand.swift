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
            the latency a round trip (20mbit,60ms: 20 Mbit/s each way, 30 ms each way). Each round syncs with gzip and \
            without through the link, and with gzip through the same relay unshaped (the yardstick: what the sync needs \
            when the link costs nothing), alternating the order. It prints the bytes each way, the time, the link's \
            time for the bytes, and the ratio to the bound 1.3 x max(relay, link time) + 5 round trips. --text says \
            what the records hold: notes (varied words), compressible (one sentence repeated) or random letters. \
            With --json the last line is one JSON object of medians.

            Example:
              swift run -c release cairn bench network --link 20mbit,60ms \\
                --records 100000 --json
            """)

    @Option(name: .long, help: "The link: RATE[/UPRATE],LATENCY[,loss=PERCENT], such as 20mbit,60ms or 5mbit/1mbit,150ms.")
    var link: String = "20mbit,60ms"

    @Option(name: .long, help: "Records in the first sync.")
    var records: Int = 20_000

    @Option(name: .long, help: "Rounds of one gzip, one plain and one unshaped sync each (the medians are reported).")
    var rounds: Int = 3

    @Option(name: .long, help: "The records' text: notes, compressible or random.")
    var text: String = "notes"

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0 else { throw ValidationError("--records must be positive") }
        guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
        do { _ = try LinkProfile(parsing: link) } catch { throw ValidationError("--link: \(error)") }
        guard NetworkBenchmark.RecordText(rawValue: text) != nil else { throw ValidationError("--text must be notes, compressible or random") }
    }

    func run() async throws {
        let result = try await NetworkBenchmark(
            records: records, link: try LinkProfile(parsing: link), rounds: rounds, text: NetworkBenchmark.RecordText(rawValue: text) ?? .notes
        ) { print($0) }.run()
        output.printFigures(result)
    }
}
