/// Rows of text printed as aligned columns under a header, for people reading a terminal.
///
/// ```swift
/// print(TextTable(["USER", "ROLE"], [["alice", "writer"]]).text)
/// // USER   ROLE
/// // alice  writer
/// ```
struct TextTable {
    let header: [String]
    let rows: [[String]]

    init(_ header: [String], _ rows: [[String]]) {
        self.header = header
        self.rows = rows
    }

    /// The header and rows, each column as wide as its widest cell, two spaces apart, without trailing spaces.
    var text: String {
        let lines = [header] + rows
        let widths = header.indices.map { column in lines.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        return lines.map { cells in
            cells.enumerated().map { column, cell in
                column == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ").trimmingTrailingSpaces
        }.joined(separator: "\n")
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
