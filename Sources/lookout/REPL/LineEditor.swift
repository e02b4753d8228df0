import CEditLine
import Foundation
import LookoutWire
import Lua

#if canImport(Glibc)
import Glibc
#endif

/// Reads lines for the REPL.
protocol LineReader: Sendable {
    /// Shows `prompt` and returns the next line, or nil at end of input.
    func readLine(prompt: String) async -> String?
    /// Prints text without garbling a prompt that is shown (timers print while you type).
    func print(_ text: String)
    /// Clears the line being typed (Ctrl-C at the prompt).
    func clearInput()
    /// Saves history and restores the terminal.
    func close()
    /// Puts the terminal back as it was (safe from any thread; used right before exiting).
    func restoreTerminal()
}

/// Plain lines from a pipe or file: no prompt, no editing.
final class PlainLineReader: LineReader, @unchecked Sendable {
    // @unchecked Sendable: stdin is read by one task at a time (the REPL loop awaits each line).
    func readLine(prompt: String) async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
        }
    }

    func print(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }
    func clearInput() {}
    func close() {}
    func restoreTerminal() {}
}

/// libedit in callback mode on a thread of its own. All libedit calls happen on that thread:
/// key presses come from stdin, and requests (prompt, print, clear) through a wake-up pipe, so
/// output from timers appears above the prompt and the line being typed is redrawn under it.
final class EditLineReader: LineReader, @unchecked Sendable {
    // @unchecked Sendable: the queued requests and the waiting reader are in `Locked`; libedit
    // state and the fields below it are touched only on the editor thread.
    private enum Request {
        case prompt(String, CheckedContinuation<String?, Never>)
        case print(String)
        case clear
        case stop
    }

    private let queue = Locked((requests: [Request](), waiting: CheckedContinuation<String?, Never>?.none))
    private var wake: [Int32] = [0, 0]
    private let stopped = DispatchSemaphore(value: 0)
    private let historyFile: String?
    private let completer: @Sendable (String, Int) -> (candidates: [String], start: Int)
    // libedit calls back through C function pointers without context: these two globals are
    // written and read only on the editor thread (one editor per process).
    nonisolated(unsafe) static var current: EditLineReader?
    nonisolated(unsafe) static var matches: [String] = []
    private var promptShown = false
    private var currentPrompt = ""
    private var savedTerminal = termios()
    private let hasSavedTerminal: Bool

    /// Starts the editor thread.
    init(historyFile: String?, completer: @escaping @Sendable (String, Int) -> (candidates: [String], start: Int)) {
        self.historyFile = historyFile
        self.completer = completer
        hasSavedTerminal = tcgetattr(0, &savedTerminal) == 0
        _ = pipe(&wake)
        EditLineReader.current = self
        let thread = Thread { [self] in self.loop() }
        thread.name = "lookout: line editor"
        thread.start()
    }

    func readLine(prompt: String) async -> String? {
        await withCheckedContinuation { continuation in post(.prompt(prompt, continuation)) }
    }

    func print(_ text: String) { post(.print(text)) }
    func clearInput() { post(.clear) }
    func close() { post(.stop) }

    func restoreTerminal() {
        guard hasSavedTerminal else { return }
        var settings = savedTerminal
        tcsetattr(0, TCSANOW, &settings)
    }

    private func post(_ request: Request) {
        queue.withLock { $0.requests.append(request) }
        var byte: UInt8 = 1
        _ = write(wake[1], &byte, 1)
    }

    private func loop() {
        lookout_rl_set_name("lookout")
        lookout_rl_set_catch_signals(0)
        lookout_rl_set_completion(completionHook)
        lookout_rl_set_word_breaks(EditLineReader.wordBreaks)
        using_history()
        stifle_history(1000)
        if let historyFile { _ = read_history(historyFile) }
        var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
        while true {
            fds[0].events = promptShown ? Int16(POLLIN) : 0
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { break }
            if fds[1].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                _ = read(wake[0], &buffer, 64)
                if !handleRequests() { break }
            }
            if promptShown, fds[0].revents != 0 { rl_callback_read_char() }
        }
        if promptShown { rl_callback_handler_remove() }
        if let historyFile { _ = write_history(historyFile) }
        restoreTerminal()
        stopped.signal()
    }

    /// Waits until the editor thread has saved history and restored the terminal.
    func waitUntilStopped() { _ = stopped.wait(timeout: .now() + 2) }

    /// Handles queued requests; false when asked to stop.
    private func handleRequests() -> Bool {
        let batch = queue.withLock { queue in
            defer { queue.requests = [] }
            return queue.requests
        }
        for request in batch {
            switch request {
            case .prompt(let prompt, let continuation):
                queue.withLock { $0.waiting = continuation }
                promptShown = true
                currentPrompt = prompt
                rl_callback_handler_install(prompt, lineHook)
            case .print(let text):
                if promptShown {
                    FileHandleOutput.standardOutput.write("\r\u{1B}[K" + text + "\n")
                    rl_forced_update_display()
                } else {
                    FileHandleOutput.standardOutput.write(text + "\n")
                }
            case .clear:
                if promptShown {  // a fresh, empty line under a new prompt
                    rl_callback_handler_remove()
                    FileHandleOutput.standardOutput.write("^C\n")
                    rl_callback_handler_install(currentPrompt, lineHook)
                }
            case .stop:
                return false
            }
        }
        return true
    }

    /// A line was entered (nil: end of input).
    fileprivate func deliver(_ line: String?) {
        promptShown = false
        rl_callback_handler_remove()
        if let line, !line.trimmingCharacters(in: .whitespaces).isEmpty { _ = add_history(line) }
        if let historyFile { _ = write_history(historyFile) }
        let continuation = queue.withLock { queue in
            defer { queue.waiting = nil }
            return queue.waiting
        }
        continuation?.resume(returning: line)
    }

    fileprivate func completions(text: String) -> [String] {
        let line = String(cString: lookout_rl_line_buffer())
        let cursor = Int(lookout_rl_point())
        let before = String(decoding: Array(line.utf8).prefix(cursor), as: UTF8.self)
        let (candidates, start) = completer(before, cursor + 1)
        // The REPL replaces from `start`; libedit replaces the word `text`: trim the difference.
        let bytes = Array(before.utf8)
        let wordStart = bytes.count - text.utf8.count
        let skip = max(0, wordStart - (start - 1))
        return candidates.compactMap { candidate in
            let c = Array(candidate.utf8)
            guard skip <= c.count else { return nil }
            return String(decoding: c[skip...], as: UTF8.self)
        }
    }

    /// Lua identifiers keep `.` and `:` in the word being completed. (Never written after start.)
    nonisolated(unsafe) private static let wordBreaks: UnsafeMutablePointer<CChar> = strdup(" \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]")
}

private let lineHook: @convention(c) (UnsafeMutablePointer<CChar>?) -> Void = { line in
    let text = line.map { String(cString: $0) }
    free(line)
    EditLineReader.current?.deliver(text)
}

private let completionHook: @convention(c) (UnsafePointer<CChar>?, Int32, Int32) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = { text, _, _ in
    lookout_rl_set_completion_over(1)  // no filename completion
    lookout_rl_set_append_character(0)
    guard let text, let editor = EditLineReader.current else { return nil }
    EditLineReader.matches = editor.completions(text: String(cString: text))
    guard !EditLineReader.matches.isEmpty else { return nil }
    return rl_completion_matches(text, matchGenerator)
}

private let matchGenerator: @convention(c) (UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>? = { _, state in
    let index = Int(state)
    guard index < EditLineReader.matches.count else { return nil }
    return strdup(EditLineReader.matches[index])
}
