import Foundation

/// One fenced Swift block of a Markdown document.
struct Snippet {
    /// The line of the block's first code line in its document (1-based).
    var line: Int
    var lines: [String]
    /// The module a `<!-- snippet: requires MODULE -->` line before the block names: the block compiles only where
    /// that module exists (Apple-only frameworks such as BackgroundTasks).
    var requires: String?
}

/// Finds the ```swift blocks of a Markdown text.
enum SnippetReader {
    static func snippets(in text: String) -> [Snippet] {
        var snippets: [Snippet] = []
        var current: Snippet?
        var requires: String?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var snippet = current {
                if trimmed.hasPrefix("```") {
                    snippets.append(snippet)
                    current = nil
                } else {
                    snippet.lines.append(line)
                    current = snippet
                }
            } else if trimmed == "```swift" {
                current = Snippet(line: index + 2, lines: [], requires: requires)
                requires = nil
            } else if trimmed.hasPrefix("<!-- snippet: requires "), trimmed.hasSuffix("-->") {
                requires = String(trimmed.dropFirst("<!-- snippet: requires ".count).dropLast(3)).trimmingCharacters(in: .whitespaces)
            } else if !trimmed.isEmpty {
                requires = nil
            }
        }
        return snippets
    }
}

/// A snippet split the way Swift needs it: imports go to the top of the file, declarations (types, functions, tests)
/// to the document's namespace, and statements into a function of their own.
struct SplitSnippet {
    var imports: [String] = []
    /// Runs of declaration lines, each with the document line it starts at.
    var declarations: [(line: Int, lines: [String])] = []
    /// Runs of statement lines, each with the document line it starts at.
    var statements: [(line: Int, lines: [String])] = []

    private static let declarationStarts = [
        "struct ", "final class ", "class ", "enum ", "actor ", "protocol ", "func ", "typealias ", "@",
    ]

    init(_ snippet: Snippet) {
        var index = 0
        let lines = snippet.lines
        while index < lines.count {
            let line = lines[index]
            let start = snippet.line + index
            if line.hasPrefix("import ") {
                imports.append(line.trimmingCharacters(in: .whitespaces))
                index += 1
            } else if Self.declarationStarts.contains(where: line.hasPrefix) {
                // A declaration at the left margin runs until its braces balance (after any attribute lines).
                var depth = 0
                var opened = false
                var run: [String] = []
                repeat {
                    let text = lines[index]
                    run.append(text)
                    let change = Self.braceBalance(text)
                    depth += change.balance
                    opened = opened || change.opens
                    index += 1
                } while index < lines.count && (depth > 0 || (!opened && lines[index - 1].hasPrefix("@")))
                declarations.append((start, run))
            } else {
                if statements.last.map({ $0.line + $0.lines.count == start }) == true {
                    statements[statements.count - 1].lines.append(line)
                } else {
                    statements.append((start, [line]))
                }
                index += 1
            }
        }
    }

    /// How a line changes the depth of braces, ignoring those in string literals and comments.
    static func braceBalance(_ line: String) -> (balance: Int, opens: Bool) {
        var balance = 0
        var opens = false
        var inString = false
        var previous: Character = " "
        for character in line {
            if inString {
                if character == "\"" && previous != "\\" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "/" && previous == "/" {
                break
            } else if character == "{" {
                balance += 1
                opens = true
            } else if character == "}" {
                balance -= 1
            }
            previous = character
        }
        return (balance, opens)
    }
}
