import Foundation

/// Renders reports as the text blocks and the summary table the bench prints.
enum ReportPrinter {
    /// Width of the label column in a block.
    private static let labelWidth = 34

    /// The block of one benchmark: title, figures, notes and ratios.
    static func block(_ report: BenchReport) -> String {
        var lines = ["\(report.id) \(report.title)"]
        for figure in report.figures {
            let label = pad(figure.label, labelWidth)
            if let value = figure.value {
                let number = pad(format(value, unit: figure.unit), 10, right: true)
                lines.append("  \(label)\(number)" + (figure.detail.map { "   \($0)" } ?? ""))
            } else {
                lines.append("  \(label)\(figure.detail ?? "SKIP")")
            }
        }
        for ratio in report.ratios {
            lines.append("  " + pad("ratio " + ratio.label, labelWidth) + ratioText(ratio))
        }
        for note in report.notes { lines.append("  note: \(note)") }
        return lines.joined(separator: "\n")
    }

    /// The table of every ratio of the run.
    static func summary(_ reports: [BenchReport], failures: [String: String]) -> String {
        var lines = ["Summary", "  " + pad("bench", 7) + pad("ratio", 28) + pad("value", 10, right: true)
            + "   " + pad("target", 10) + "result"]
        for report in reports {
            for ratio in report.ratios {
                let value = ratio.value.map(ratioNumber) ?? "-"
                lines.append("  " + pad(report.id, 7) + pad(ratio.label, 28) + pad(value, 10, right: true)
                    + "   " + pad(targetText(ratio), 10) + resultText(ratio))
            }
        }
        for (id, reason) in failures.sorted(by: { $0.key < $1.key }) {
            lines.append("  " + pad(id, 7) + "FAILED: \(reason)")
        }
        return lines.joined(separator: "\n")
    }

    private static func ratioText(_ ratio: BenchRatio) -> String {
        guard let value = ratio.value else {
            return ratio.skipReason ?? "SKIP"
        }
        let number = pad(ratioNumber(value), 10, right: true)
        guard ratio.target != nil else { return number + "   (information, no target)" }
        return number + "   target " + targetText(ratio) + "   " + resultText(ratio)
    }

    /// "1.37x", or "0.004x" for small ratios.
    private static func ratioNumber(_ value: Double) -> String {
        String(format: value < 0.1 ? "%.3fx" : "%.2fx", value)
    }

    private static func targetText(_ ratio: BenchRatio) -> String {
        guard let target = ratio.target else { return "-" }
        let op = ratio.goal == .atMost ? "<=" : ">="
        return "\(op) \(trim(target))x"
    }

    private static func resultText(_ ratio: BenchRatio) -> String { ratio.result }

    /// A value with its unit, with a precision suited to the unit.
    static func format(_ value: Double, unit: String) -> String {
        switch unit {
        case "s": return String(format: "%.3f s", value)
        case "ms": return String(format: "%.2f ms", value)
        case "MB": return String(format: "%.2f MB", value)
        case "": return trim(value)
        default: return "\(trim(value)) \(unit)"
        }
    }

    /// A number without trailing zeros (1.5, 20, 0.25).
    static func trim(_ value: Double) -> String {
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return right ? text : text + " " }
        let fill = String(repeating: " ", count: width - count)
        return right ? fill + text : text + fill
    }
}
