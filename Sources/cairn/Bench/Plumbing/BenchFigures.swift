import CairnProtocol

/// The last line of every `cairn bench` run: with `--json`, the run's figures as one JSON object.
extension JSONOutputOption {
    /// Prints `figures` as one line of JSON when `--json` was given; nothing otherwise.
    func printFigures(_ figures: [String: JSONValue]) {
        if json { print(JSONValue.object(figures).jsonText()) }
    }
}
