import ArgumentParser
import Foundation
import LookoutConfig
import LookoutModules
import Lua

/// `lookout repl [--load FILE]` (also `lookout` with no arguments).
struct ReplCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "Interactive Lua with Lookout's modules (the default on a terminal).",
        discussion: """
            Expressions print their value; calls that wait (sleep, HTTP, Nightscout…) work at the
            prompt, and timers keep running between lines. Tab completes names, help(x) explains
            them. Commands: .tasks, .reset, .load FILE, .quit. Ctrl-C cancels the running line; twice
            quickly leaves. With standard input not a terminal, reads plain lines (no prompts).
            """)

    @Option(help: "Run this script first and keep its state.")
    var load: String?

    @OptionGroup var script: ScriptOptions

    /// A warning on standard error (a profile catalogue that cannot be read).
    @Sendable static func warn(_ message: String) {
        FileHandle.standardError.write(Data("lookout: warning: \(message)\n".utf8))
    }

    func run() async throws {
        let environment = try await HostEnvironment.load().addingCatalogue(warn: ReplCommand.warn)
        let logger = environment.bootstrapLogging(verbose: script.verbose)
        let interactive = isatty(0) != 0
        var history: String?
        if interactive, (try? environment.paths.createStateDirectory()) != nil {
            history = environment.paths.historyFile
        }
        let relay = OutputRelay()
        let options = try environment.luaOptions(
            name: "repl", script: script, arguments: ["repl"], scriptDirectory: FileManager.default.currentDirectoryPath,
            output: { relay.print($0) })
        let confirmation = RemoteConfirmation()
        let runtime = LuaRuntime(options: options, modules: environment.modules(logger: logger, confirmation: confirmation))
        do {
            try await runtime.start()
            try await runtime.prepareREPL()
        } catch {
            throw HostSetupError(description: "cannot start Lua: \(error)")
        }
        let reader: any LineReader
        if interactive {
            reader = EditLineReader(historyFile: history) { line, cursor in
                ReplCompletion.candidates(runtime: runtime, line: line, cursor: cursor)
            }
        } else {
            reader = PlainLineReader()
        }
        relay.reader = reader
        // A live Loop command asks first; without a terminal to answer, the answer is no.
        confirmation.install { question in
            guard interactive else { return false }
            let answer = await reader.readLine(prompt: question + " [y/N] ")
            return ["y", "yes"].contains(answer?.trimmingCharacters(in: .whitespaces).lowercased() ?? "")
        }
        let session = ReplSession(runtime: runtime, reader: reader, interactive: interactive) {
            try await HostEnvironment.load().addingCatalogue(warn: ReplCommand.warn).modules(logger: logger, confirmation: confirmation)
        }
        if interactive {
            reader.print("Lookout \(LookoutVersion.current) (Lua 5.4): help() for help, .quit or Ctrl-D to leave")
        }
        if let load { await session.load(file: load) }
        let signals = SignalWatcher { number in
            if number == SIGINT { session.interrupt() } else { session.terminate(status: 130) }
        }
        await session.loop()
        signals.cancel()
        await runtime.close()  // first: output of <close> handlers still reaches the terminal
        reader.close()
        if let editor = reader as? EditLineReader { editor.waitUntilStopped() }
    }
}

/// Sends `print` output to the line reader once it exists.
final class OutputRelay: @unchecked Sendable {
    // @unchecked Sendable: `reader` is set once before any script runs, then only read.
    var reader: (any LineReader)?
    func print(_ text: String) {
        if let reader { reader.print(text) } else { FileHandleOutput.standardOutput.write(text + "\n") }
    }
}

/// Completion from the input thread: asks the runtime and waits briefly.
enum ReplCompletion {
    static func candidates(runtime: LuaRuntime, line: String, cursor: Int) -> (candidates: [String], start: Int) {
        let box = ResultBox<(candidates: [String], start: Int)>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await runtime.complete(line: line, cursor: cursor)
            done.signal()
        }
        // A line that is computing holds the Lua thread: give up rather than freeze the terminal.
        guard done.wait(timeout: .now() + 0.5) == .success, let value = box.value else { return ([], cursor) }
        return value
    }
}

/// A value handed from a task to a waiting thread.
final class ResultBox<T>: @unchecked Sendable {
    // @unchecked Sendable: written before the semaphore is signalled, read after waiting on it.
    var value: T?
}
