import Foundation
import LookoutWire
import Lua

/// The read–evaluate–print loop: prompts, continuation lines, meta commands, Ctrl-C.
final class ReplSession: Sendable {
    private let runtime: LuaRuntime
    private let reader: any LineReader
    private let interactive: Bool
    private let state = Locked((evaluating: false, lastInterrupt: Date?.none))
    /// The modules over config.toml as it is now (`.reset` rereads it); throws a config error.
    private let reloadModules: @Sendable () async throws -> [any LuaModule]

    init(runtime: LuaRuntime, reader: any LineReader, interactive: Bool,
         reloadModules: @escaping @Sendable () async throws -> [any LuaModule]) {
        self.runtime = runtime
        self.reader = reader
        self.interactive = interactive
        self.reloadModules = reloadModules
    }

    /// Ctrl-C: cancels the running line, or clears the input; twice within a second leaves.
    func interrupt() {
        let now = Date()
        let (busy, twice) = state.withLock { state in
            let twice = state.lastInterrupt.map { now.timeIntervalSince($0) < 1 } ?? false
            state.lastInterrupt = now
            return (state.evaluating, twice)
        }
        if twice && !busy {
            terminate(status: 0)
        }
        if busy {
            runtime.interruptLine()
            Task { await runtime.cancelLine() }
        } else {
            reader.clearInput()
        }
    }

    /// Leaves now (Ctrl-C twice, SIGTERM): stops the running line, cancels every task (their
    /// `<close>` variables run and may print), saves history and restores the terminal.
    func terminate(status: Int32) -> Never {
        runtime.interruptLine()
        let closed = DispatchSemaphore(value: 0)
        let runtime = self.runtime
        Task {
            await runtime.close()
            closed.signal()
        }
        _ = closed.wait(timeout: .now() + 2)
        leave(status: status)
    }

    private func leave(status: Int32) -> Never {
        reader.close()
        if let editor = reader as? EditLineReader { editor.waitUntilStopped() }
        reader.restoreTerminal()
        FileHandleOutput.standardOutput.write("\n")
        Foundation.exit(status)
    }

    /// Reads and runs lines until end of input or `.quit`.
    func loop() async {
        var pending = ""
        while true {
            var prompt = ""
            if interactive {
                let prompts = await runtime.prompts()
                prompt = pending.isEmpty ? prompts.first : prompts.continuation
            }
            guard let line = await reader.readLine(prompt: prompt) else { break }
            if pending.isEmpty, line.hasPrefix(".") {
                if await !command(line) { break }
                continue
            }
            pending = pending.isEmpty ? line : pending + "\n" + line
            if pending.trimmingCharacters(in: .whitespaces).isEmpty {
                pending = ""
                continue
            }
            state.withLock { $0.evaluating = true }
            let result = await runtime.evaluate(pending)
            state.withLock { $0.evaluating = false }
            switch result {
            case .incomplete:
                continue
            case .output(let text):
                if !text.isEmpty { reader.print(text) }
            case .error(let message):
                reader.print(message)
            }
            pending = ""
        }
    }

    /// Runs a script file in the REPL's state (`--load`, `.load`).
    func load(file: String) async {
        state.withLock { $0.evaluating = true }
        let result = await runtime.evaluate(file: file)
        state.withLock { $0.evaluating = false }
        if case .error(let message) = result { reader.print(message) }
    }

    /// Meta commands; false means leave.
    private func command(_ line: String) async -> Bool {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        switch parts[0] {
        case ".quit", ".exit", ".q":
            return false
        case ".tasks":
            reader.print(await runtime.taskListing())
        case ".reset":
            // config.toml and the profile catalogue again (profiles, channels, settings); a broken
            // one keeps the last good one.
            var modules: [any LuaModule]?
            var note = "config.toml reread"
            do { modules = try await reloadModules() } catch {
                note = "config.toml not reread (\(error)); kept the configuration from before"
            }
            do {
                try await runtime.reset(modules: modules)
                try await runtime.prepareREPL()
                reader.print("new Lua state: globals, timers and tasks are gone; " + note)
            } catch {
                reader.print("reset failed: \(error)")
            }
        case ".load":
            guard parts.count == 2 else {
                reader.print("usage: .load FILE")
                return true
            }
            await load(file: parts[1].trimmingCharacters(in: .whitespaces))
        case ".help":
            reader.print(".tasks  running tasks and timers\n.reset  fresh Lua state, config.toml reread\n.load FILE  run a script here\n.quit  leave\nhelp(x)  documentation of x")
        default:
            reader.print("unknown command \(parts[0]); try .help")
        }
        return true
    }
}
