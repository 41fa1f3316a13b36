import ArgumentParser

/// The `--json` flag of every command that can print JSON, declared once: one spelling and one help text. What the
/// JSON holds is each command's own, and its description says so.
///
/// ```swift
/// @OptionGroup var output: JSONOutputOption
/// if output.json { print(report.jsonText()) }
/// ```
struct JSONOutputOption: ParsableArguments {
    @Flag(name: .long, help: "Print JSON; the command's description says what it holds.")
    var json = false
}
