import Foundation

/// Reads a form from the terminal (or any stdin): one-line answers and multi-line texts that end
/// at an empty line or end of input. Prompts go to standard error, so standard output carries
/// only results.
struct FeedbackForm {
    /// Reads one line (nil at end of input).
    var readLine: () -> String? = { Swift.readLine(strippingNewline: true) }
    /// Writes a prompt.
    var prompt: (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }

    /// A one-line answer; empty gives `defaultValue`.
    func line(_ question: String, default defaultValue: String? = nil) -> String? {
        prompt(question + (defaultValue.map { " [\($0)]" } ?? "") + ": ")
        guard let answer = readLine()?.trimmingCharacters(in: .whitespaces) else { return defaultValue }
        return answer.isEmpty ? defaultValue : answer
    }

    /// Lines until an empty line or end of input, joined with newlines (nil when none).
    func text(_ question: String) -> String? {
        prompt(question + " (end with an empty line):\n")
        var lines: [String] = []
        while let line = readLine(), !line.isEmpty { lines.append(line) }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    /// A yes/no answer.
    func confirm(_ question: String, default defaultValue: Bool) -> Bool {
        prompt(question + (defaultValue ? " [Y/n]: " : " [y/N]: "))
        guard let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased(), !answer.isEmpty else { return defaultValue }
        return answer.hasPrefix("y")
    }
}
