import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `lookout` (no arguments) on a pseudo-terminal: banner, prompts, line editing, completion,
/// output from timers above the prompt, Ctrl-C, history.
final class ReplTerminalTests: CLITestCase, @unchecked Sendable {
    private var terminals: [PseudoTerminal] = []

    override func tearDown() {
        super.tearDown()  // kills what still runs and waits for its output to end
        for terminal in terminals { terminal.close() }
        terminals = []
    }

    /// A REPL on a fresh terminal, waited for until its first prompt.
    private final class Session {
        let process: ChildProcess
        let terminal: PseudoTerminal
        /// Output before this byte has been looked at.
        var mark = 0

        init(process: ChildProcess, terminal: PseudoTerminal) {
            self.process = process
            self.terminal = terminal
        }

        /// Lines the terminal shows for the output since `mark` (cursor moves applied).
        var screen: [String] { TerminalText.screen(process.output(after: mark)) }

        /// Moves the mark to the start of the last line shown so far (so the screen since the mark
        /// begins with the prompt of the line being typed).
        func markNow() { mark = process.lastLineStart }

        /// Types text (a `\r` is the Enter key).
        func type(_ text: String) { process.write(text) }

        /// Waits until the screen (since the mark) satisfies `predicate`.
        @discardableResult
        func waitForScreen(
            _ what: String, timeout: TimeInterval = 20, file: StaticString = #filePath, line: UInt = #line,
            _ predicate: ([String]) -> Bool
        ) -> Bool {
            process.waitForOutput(
                after: mark, timeout: timeout, what, file: file, line: line,
                transform: { TerminalText.screen($0).joined(separator: "\n") },
                until: { predicate($0.components(separatedBy: "\n")) })
        }

        /// Types a line and waits until its output is followed by a fresh prompt; returns the lines
        /// shown between the typed line and that prompt.
        func enter(
            _ text: String, prompt: String = ">", file: StaticString = #filePath, line: UInt = #line
        ) -> [String]? {
            markNow()
            type(text + "\r")
            let ok = waitForScreen("the output of `\(text)` and a new prompt \"\(prompt) \"", file: file, line: line) {
                lines in lines.count >= 2 && lines.last == prompt
            }
            guard ok else { return nil }
            let lines = screen
            markNow()
            return Array(lines.dropFirst().dropLast())
        }
    }

    private func startREPL(
        _ arguments: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) throws -> Session {
        let terminal = try PseudoTerminal()
        terminals.append(terminal)
        let process = try launch(
            arguments, environment: ["TERM": "xterm"],
            streams: .terminal(master: terminal.master, slavePath: terminal.slavePath), file: file, line: line)
        let session = Session(process: process, terminal: terminal)
        process.waitForOutput(containing: "Lookout ", file: file, line: line)
        session.waitForScreen("the banner, then the prompt", file: file, line: line) { lines in
            lines.contains { $0.hasPrefix("Lookout ") && $0.contains(".quit") } && lines.last == ">"
        }
        session.markNow()
        return session
    }

    private func quit(_ session: Session, file: StaticString = #filePath, line: UInt = #line) -> ProcessResult? {
        session.type(".quit\r")
        return session.process.waitForExit(timeout: 20, file: file, line: line)
    }

    // MARK: Tests

    func testEvaluatesExpressionsAndContinuationLines() throws {
        let session = try startREPL()
        XCTAssertEqual(session.enter("1 + 2"), ["3"])

        session.markNow()
        session.type("x = 1 +\r")
        session.waitForScreen("the continuation prompt \">> \"") { $0.last == ">>" }
        XCTAssertEqual(session.enter("2"), [])
        XCTAssertEqual(session.enter("x"), ["3"])
        XCTAssertEqual(session.enter("print('a', 'b')"), ["a\tb".replacingOccurrences(of: "\t", with: "       ")])

        let result = try XCTUnwrap(quit(session))
        assertExit(result, 0)
    }

    func testErrorsAreShownAndTheREPLGoesOn() throws {
        let session = try startREPL()
        let lines = try XCTUnwrap(session.enter("error('terminal failure')"))
        XCTAssertTrue(lines.contains { $0.contains("repl:1: terminal failure") }, "\(lines)")
        XCTAssertEqual(session.enter("2 * 21"), ["42"])
        assertExit(try XCTUnwrap(quit(session)), 0)
    }

    func testTabCompletesNames() throws {
        let session = try startREPL()
        session.type("string.fo\t")
        session.waitForScreen("`string.fo` completed to `string.format`") { $0.last == "> string.format" }
        XCTAssertEqual(session.enter("(\"%d-%s\", 42, 'x')"), ["\"42-x\""])

        // Method names of a value, and module names inside require("….
        XCTAssertEqual(session.enter("s = 'abc'"), [])
        session.type("s:up\t")
        session.waitForScreen("`s:up` completed to `s:upper`") { $0.last == "> s:upper" }
        XCTAssertEqual(session.enter("()"), ["\"ABC\""])
        session.type("require(\"js\t")
        session.waitForScreen("`require(\"js` completed to `require(\"json`") { $0.last == "> require(\"json" }
        XCTAssertEqual(session.enter("\") == json"), ["true"])
        assertExit(try XCTUnwrap(quit(session)), 0)
    }

    func testTimerOutputAppearsAboveThePromptAndTheLineIsRedrawn() throws {
        let session = try startREPL()
        let shown = try XCTUnwrap(session.enter("t = timer.after(0.5, function() print('tick') end)"))
        XCTAssertEqual(shown, [])
        // Start typing while the timer is pending: its output must not garble the line.
        session.type("12")
        session.waitForScreen("the prompt, then the tick above the redrawn line") { lines in
            lines.contains("tick") && lines.last == "> 12"
        }
        let lines = session.screen
        let tick = try XCTUnwrap(lines.firstIndex(of: "tick"), "\(lines)")
        XCTAssertEqual(lines.last, "> 12")
        XCTAssertEqual(tick, lines.count - 2, "the prompt is redrawn right under the timer's output: \(lines)")
        XCTAssertEqual(session.enter("3"), ["123"])
        assertExit(try XCTUnwrap(quit(session)), 0)
    }

    func testTimerOutputWithBriefDelay() throws {
        let session = try startREPL()
        session.markNow()
        session.type("timer.after(0.05, function() print('tick') end)\r")
        session.waitForScreen("the tick, then a prompt") { lines in
            guard let tick = lines.lastIndex(of: "tick") else { return false }
            return lines.last == ">" && tick < lines.count - 1
        }
        XCTAssertEqual(session.enter("'after'"), ["\"after\""])
        assertExit(try XCTUnwrap(quit(session)), 0)
    }

    func testCtrlCCancelsTheRunningLine() throws {
        let session = try startREPL()
        session.markNow()
        // The markers are built at run time so that the echo of the typed line does not contain them.
        // An hour's sleep: a new prompt within the wait's timeout is Ctrl-C's doing.
        session.type("print('sleep' .. 'ing') sleep(3600) print('wo' .. 'ke')\r")
        session.waitForScreen("the line to start") { $0.contains("sleeping") }
        session.markNow()
        session.type("\u{03}")
        session.waitForScreen("the line cancelled and a new prompt") { lines in
            lines.contains { $0.contains("cancelled") } && lines.last == ">"
        }
        XCTAssertFalse(session.process.hasExited, "Ctrl-C on a running line must not end the REPL")
        XCTAssertEqual(session.enter("1 + 2"), ["3"])
        XCTAssertFalse(TerminalText.screen(session.process.output()).contains("woke"))
        assertExit(try XCTUnwrap(quit(session)), 0)
    }

    func testCtrlCAtThePromptClearsTheLine() throws {
        let session = try startREPL()
        session.markNow()
        session.type("abc")
        session.waitForScreen("the typed text") { $0.last == "> abc" }
        session.markNow()
        session.type("\u{03}")
        session.waitForScreen("an empty prompt after Ctrl-C", timeout: 10) { $0.last == ">" }
        XCTAssertFalse(session.process.hasExited)
        XCTAssertEqual(session.enter("1 + 1"), ["2"], "the cleared text must not stay in the line")
        assertExit(try XCTUnwrap(quit(session)), 0)
    }

    /// Ctrl-C twice within a second at the prompt leaves with status 0, and the terminal gets its
    /// modes back. The REPL calls exit() while the editor thread may still hold the terminal in raw
    /// mode, so this is repeated: every run must restore the terminal.
    func testCtrlCTwiceAtThePromptLeavesAndRestoresTheTerminal() throws {
        var leftRaw = 0
        let runs = 6
        for run in 1...runs {
            let session = try startREPL()
            session.type("\u{03}")
            guard session.waitForScreen("the first Ctrl-C", { lines in lines.contains { $0.contains("^C") } }) else { return }
            session.type("\u{03}")
            let result = try XCTUnwrap(session.process.waitForExit(timeout: 20))
            assertExit(result, 0)
            var modes = termios()
            XCTAssertEqual(tcgetattr(session.terminal.master, &modes), 0)
            if modes.c_lflag & tcflag_t(ECHO) == 0 || modes.c_lflag & tcflag_t(ICANON) == 0 {
                leftRaw += 1
                print("run \(run): terminal left without ECHO/ICANON after Ctrl-C Ctrl-C")
            }
        }
        XCTAssertEqual(leftRaw, 0, "\(leftRaw) of \(runs) runs left the terminal in raw mode (no echo, no line editing)")
    }

    /// SIGTERM (`kill`, a service manager, a closing session) at the prompt must not leave the
    /// terminal in the editor's raw mode.
    func testSIGTERMAtThePromptRestoresTheTerminal() throws {
        let session = try startREPL()
        session.process.send(signal: SIGTERM)
        _ = try XCTUnwrap(session.process.waitForExit(timeout: 20))
        var modes = termios()
        XCTAssertEqual(tcgetattr(session.terminal.master, &modes), 0)
        XCTAssertNotEqual(modes.c_lflag & tcflag_t(ECHO), 0, "echo is off after SIGTERM")
        XCTAssertNotEqual(modes.c_lflag & tcflag_t(ICANON), 0, "canonical mode is off after SIGTERM")
    }

    func testCtrlDLeaves() throws {
        let session = try startREPL()
        session.type("\u{04}")
        let result = try XCTUnwrap(session.process.waitForExit(timeout: 20))
        assertExit(result, 0)
        var modes = termios()
        XCTAssertEqual(tcgetattr(session.terminal.master, &modes), 0)
        XCTAssertNotEqual(modes.c_lflag & tcflag_t(ECHO), 0, "echo restored")
        XCTAssertNotEqual(modes.c_lflag & tcflag_t(ICANON), 0, "canonical mode restored")
    }

    func testQuitRestoresTheTerminal() throws {
        let session = try startREPL()
        assertExit(try XCTUnwrap(quit(session)), 0)
        var modes = termios()
        XCTAssertEqual(tcgetattr(session.terminal.master, &modes), 0)
        XCTAssertNotEqual(modes.c_lflag & tcflag_t(ECHO), 0, "echo restored")
        XCTAssertNotEqual(modes.c_lflag & tcflag_t(ICANON), 0, "canonical mode restored")
    }

    /// Leaving cancels the REPL's tasks; what their `<close>` variables print must still reach the
    /// terminal (it does through a pipe).
    func testQuitShowsOutputOfCloseVariables() throws {
        let session = try startREPL()
        XCTAssertEqual(
            session.enter(
                "t = task.spawn(function() local x <close> = setmetatable({}, "
                    + "{ __close = function() print('clo' .. 'sed') end }) sleep(60) end)"), [])
        let result = try XCTUnwrap(quit(session))
        assertExit(result, 0)
        XCTAssertTrue(
            TerminalText.screen(result.stdout).contains("closed"),
            "the output of the <close> handler was lost:\n\(TerminalText.stripped(result.stdout))")
    }

    func testHistoryIsSavedAndRecalled() throws {
        let session = try startREPL()
        XCTAssertEqual(session.enter("40 + 2"), ["42"])
        XCTAssertEqual(session.enter("'second'"), ["\"second\""])
        assertExit(try XCTUnwrap(quit(session)), 0)

        let historyFile = home + "/state/history"
        XCTAssertTrue(FileManager.default.fileExists(atPath: historyFile), "no history at \(historyFile)")
        let saved = try String(contentsOfFile: historyFile, encoding: .utf8)
            .replacingOccurrences(of: "\\040", with: " ")  // libedit's encoding of spaces
        XCTAssertTrue(saved.contains("40 + 2"), "history file holds: [\(saved)]")
        XCTAssertTrue(saved.contains("'second'"), "history file holds: [\(saved)]")
        guard saved.contains("'second'") else { return }  // nothing to recall
        let mode = (try FileManager.default.attributesOfItem(atPath: home + "/state")[.posixPermissions] as? Int) ?? -1
        XCTAssertEqual(mode, 0o700, "the state folder is private")

        // A new session recalls the lines with the Up key (`.quit` may be the newest entry).
        let next = try startREPL()
        next.type("\u{1B}[A")
        next.waitForScreen("the last line recalled") { ["> .quit", "> 'second'"].contains($0.last ?? "") }
        if next.screen.last == "> .quit" {
            next.type("\u{1B}[A")
            next.waitForScreen("the line before .quit recalled") { $0.last == "> 'second'" }
        }
        next.type("\u{1B}[A")
        next.waitForScreen("the line before recalled") { $0.last == "> 40 + 2" }
        XCTAssertEqual(next.enter(""), ["42"])
        assertExit(try XCTUnwrap(quit(next)), 0)
    }

    func testTasksCommandOnTheTerminal() throws {
        let session = try startREPL()
        _ = session.enter("t = timer.every(10, function() end)")
        let lines = try XCTUnwrap(session.enter(".tasks"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("timer every 10s") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("memory:") }, "\(lines)")
        assertExit(try XCTUnwrap(quit(session)), 0)
    }
}
