import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads answers at the terminal (prompts on standard error, so standard output stays clean).
enum TerminalPrompt {
    /// A line from standard input (nil at end of input or when empty).
    static func line(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        guard let text = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }

    /// A line read with echo off when standard input is a terminal.
    static func secret(_ prompt: String) -> String? {
        guard isatty(0) == 1 else { return line(prompt) }
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { return line(prompt) }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSANOW, &quiet)
        defer {
            tcsetattr(0, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return line(prompt)
    }
}
