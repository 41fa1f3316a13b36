import ArgumentParser

/// `cairn bench live`: how long a write takes to reach another client through the schedulers.
struct LiveBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Measure the time from a write on one client to its arrival on another, both running their scheduler.",
        discussion: """
            Starts `cairn serve` on loopback and two clients running `run()` (push after the delay, pull on the \
            server's live notice), writes one record at a time on one and waits for it on the other. Prints the \
            median and p99. With --json the last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench live --writes 200 --push-delay-ms 1000
            """)

    @Option(name: .long, help: "How many writes to time.")
    var writes: Int = 200

    @Option(name: .long, help: "The scheduler's push delay after a write, in milliseconds (the SDK's default is 1000).")
    var pushDelayMs: Int = 1000

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard writes > 0, pushDelayMs >= 0 else { throw ValidationError("--writes must be positive and --push-delay-ms not negative") }
    }

    func run() async throws {
        let result = try await LiveLatencyBenchmark(writes: writes, pushDelay: .milliseconds(pushDelayMs)) { print($0) }.run()
        output.printFigures(result)
    }
}
