import Foundation

/// RFC 7240's `return` preference, as a batch's `Prefer` header sends it: `return=minimal` asks the server to leave
/// out of each `applied` result the data it committed exactly as sent.
public enum ReturnPreference {
    /// True when `Prefer` header values ask for `return=minimal` (names and values compared without case, the value
    /// possibly quoted, other preferences and parameters ignored).
    ///
    /// ```swift
    /// ReturnPreference.asksForMinimal(["respond-async, return=minimal"])   // true
    /// ReturnPreference.asksForMinimal(["return=representation"])          // false
    /// ```
    public static func asksForMinimal(_ values: [String]) -> Bool {
        asks(for: "return", "minimal", in: values)
    }

    /// True when `Prefer` header values also ask for `results=positional`: a client that matches results to its
    /// operations by their place, so that a minimal answer may leave out the opIds of writes committed as sent
    /// (an SDK that predates it needs them, and does not ask).
    ///
    /// ```swift
    /// ReturnPreference.asksForPositionalResults(["return=minimal, results=positional"])   // true
    /// ```
    public static func asksForPositionalResults(_ values: [String]) -> Bool {
        asks(for: "results", "positional", in: values)
    }

    private static func asks(for name: String, _ value: String, in values: [String]) -> Bool {
        values.lazy.flatMap { $0.split(separator: ",") }.contains { preference in
            // `return=minimal; a-parameter`: the preference is what comes before its parameters.
            let pair = preference.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.count == 2, parts[0] == name else { return false }
            return parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == value
        }
    }
}
