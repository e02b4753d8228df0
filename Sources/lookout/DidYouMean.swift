import ArgumentParser
import Foundation
import LookoutConfig

/// "Did you mean …?" for a command line ArgumentParser refused: an unknown subcommand
/// (`lookout tset`, `lookout sim nightscot`) or option (`lookout test --scenaro`), matched
/// against what the command being parsed knows.
enum DidYouMean {
    /// The hint line for `message` (ArgumentParser's error text) about `arguments` (without the
    /// program's name), or nil when there is no close match.
    static func hint(arguments: [String], message: String) -> String? {
        guard let word = refusedWord(message) else { return nil }
        let command = deepestCommand(arguments)
        let known = word.hasPrefix("-") ? options(of: command) : command.configuration.subcommands.map { name(of: $0) }
        guard let guess = ConfigWording.suggestion(for: word, among: known), guess != word else { return nil }
        let path = commandPath(arguments).joined(separator: " ")
        return "did you mean '\(guess)'? (see `\(path) --help`)"
    }

    /// The word ArgumentParser names in "Unexpected argument 'X'" or "Unknown option 'X'".
    static func refusedWord(_ message: String) -> String? {
        for prefix in ["Unexpected argument '", "Unknown option '"] {
            guard let start = message.range(of: prefix) else { continue }
            let rest = message[start.upperBound...]
            guard let end = rest.firstIndex(of: "'") else { continue }
            let word = String(rest[..<end])
            // "--scenaro=x" is refused as a whole; its name is what to match.
            return String(word.split(separator: "=", maxSplits: 1).first ?? Substring(word))
        }
        return nil
    }

    /// The subcommand the arguments reached: `sim nightscot` stays at `sim`.
    static func deepestCommand(_ arguments: [String]) -> ParsableCommand.Type {
        var command: ParsableCommand.Type = Lookout.self
        for argument in arguments where !argument.hasPrefix("-") {
            guard let next = command.configuration.subcommands.first(where: { name(of: $0) == argument }) else { break }
            command = next
        }
        return command
    }

    /// `lookout sim`, for the help hint.
    static func commandPath(_ arguments: [String]) -> [String] {
        var command: ParsableCommand.Type = Lookout.self
        var path = ["lookout"]
        for argument in arguments where !argument.hasPrefix("-") {
            guard let next = command.configuration.subcommands.first(where: { name(of: $0) == argument }) else { break }
            command = next
            path.append(argument)
        }
        return path
    }

    /// The name a command is called by on the command line.
    static func name(of command: ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }

    /// The long options a command's help lists.
    static func options(of command: ParsableCommand.Type) -> [String] {
        let help = command.helpMessage(columns: 1000)
        var found: [String] = []
        var rest = help[...]
        while let range = rest.range(of: #"--[a-z][a-z0-9-]*"#, options: .regularExpression) {
            let option = String(rest[range])
            if !found.contains(option) { found.append(option) }
            rest = rest[range.upperBound...]
        }
        return found
    }
}
