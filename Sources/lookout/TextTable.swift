/// Plain aligned text tables for the shell commands.
enum TextTable {
    /// `header` and `rows` with every column but the last padded to its widest cell, two spaces apart.
    static func render(_ header: [String], _ rows: [[String]]) -> String {
        let widths = (0..<header.count - 1).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { i, cell in i < widths.count ? cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) : cell }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
