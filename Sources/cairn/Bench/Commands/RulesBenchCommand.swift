import ArgumentParser

/// `cairn bench rules`: what data rules cost a pull.
struct RulesBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Measure what data rules cost a pull (build with -c release for real figures).",
        discussion: """
            Loads the same records into a collection without rules and one with a read rule, then pulls them into fresh \
            stores through the SDK: without rules, with a rule that matches every record for the user, and for a user \
            whose rule matches 1%. The three alternate for --rounds rounds; the figures are medians. With --json the \
            last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench rules --records 100000 --json
            """)

    @Option(name: .long, help: "How many records each collection holds.")
    var records: Int = 100_000

    @Option(name: .long, help: "Records per pulled page.")
    var page: Int = 5000

    @Option(name: .long, help: "Rounds of the three pulls.")
    var rounds: Int = 5

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records >= 100 else { throw ValidationError("--records must be at least 100") }
        guard (1...10000).contains(page) else { throw ValidationError("--page must be from 1 to 10000") }
        guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
    }

    func run() async throws {
        let result = try await RulesBenchmark(records: records, pageSize: page, rounds: rounds) { print($0) }.run()
        output.printFigures(result)
    }
}
