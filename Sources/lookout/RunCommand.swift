import ArgumentParser
import Foundation
import LookoutWire
import Lua

/// `lookout run FILE [ARGS…]` / `lookout run -e CODE`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a Lua script until it and everything it started has finished.",
        discussion: """
            The script's arguments reach it as `arg` (arg[0] is the script). Exit status: 0 success,
            1 script error (including errors in timers and tasks; an error in the main chunk ends
            the run at once, cancelling its timers, tasks and schedule jobs), 2 usage or configuration error,
            130 interrupted (Ctrl-C or SIGTERM: tasks are cancelled and <close> variables run).
            """)

    @Option(name: .customShort("e"), help: "Run this code instead of a file.")
    var code: String?

    @OptionGroup var script: ScriptOptions

    @Argument(parsing: .captureForPassthrough, help: "The script and its arguments.")
    var arguments: [String] = []

    func validate() throws {
        // Arguments after the script belong to it; before it, only help is ours.
        if let first = arguments.first, ["-h", "--help", "-help"].contains(first) { throw CleanExit.helpRequest(self) }
        if code == nil && arguments.isEmpty { throw ValidationError("give a script file, or code with -e") }
        // Captured for the script, an option before it would otherwise be taken for its file name.
        if code == nil, let first = arguments.first, first.hasPrefix("-"), first.count > 1 {
            throw ValidationError("unknown option '\(first)'; options of `lookout run` go before the script, the script's "
                                  + "own arguments after it (see `lookout run --help`)")
        }
    }

    /// `run`'s own options, which after the script's name belong to the script.
    static let ownOptions: Set<String> = ["-e", "-v", "--verbose", "--trusted", "--memory-limit", "--cpu-limit", "--time-limit"]

    /// The script's arguments that spell one of `run`'s own options: they are passed to the
    /// script, as with `lua` and `python`, but the person most likely meant them for `run`.
    static func misplacedOptions(_ scriptArguments: ArraySlice<String>) -> [String] {
        scriptArguments.compactMap { argument in
            let name = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            return ownOptions.contains(name) ? name : nil
        }
    }

    func run() async throws {
        if code == nil {
            for option in Self.misplacedOptions(arguments.dropFirst()) {
                FileHandle.standardError.write(Data(
                    "lookout: \(option) after the script name is passed to the script; put it before the script to mean `run`'s option\n".utf8))
            }
        }
        let environment = try await HostEnvironment.load().addingCatalogue(warn: {
            FileHandle.standardError.write(Data("lookout: warning: \($0)\n".utf8))
        })
        environment.warnAboutSecretFiles()
        let logger = environment.bootstrapLogging(verbose: script.verbose)
        let file = code == nil ? arguments.first : nil
        let name = file.map { ($0 as NSString).lastPathComponent } ?? "-e"
        // The script's folder, by plain text: Foundation's deletingLastPathComponent traps on ".".
        let directory = file.map { path -> String in
            guard let slash = path.lastIndex(of: "/") else { return "." }
            return slash == path.startIndex ? "/" : String(path[..<slash])
        }
        var options = try environment.luaOptions(
            name: name, script: script, arguments: code == nil ? arguments : ["-e"] + arguments,
            scriptDirectory: directory ?? FileManager.default.currentDirectoryPath,
            output: { FileHandleOutput.standardOutput.write($0 + "\n") })
        // An error in the main chunk ends the run at once, as under `serve`: the script is broken,
        // so the schedule jobs, timers and tasks it started before it raised are cancelled and the
        // run exits 1 instead of going on without its main chunk.
        let started = Locked<LuaRuntime?>(nil)
        let report = options.errors
        options.errors = { error in
            report(error)
            guard error.task.hasPrefix("main chunk"), let runtime = started.withLock({ $0 }) else { return }
            Task { await runtime.cancelAll() }
        }
        let runtime = LuaRuntime(options: options, modules: environment.modules(logger: logger))
        started.withLock { $0 = runtime }
        do {
            try await runtime.start()
        } catch {
            throw HostSetupError(description: "cannot start Lua: \(error)")
        }
        let interrupts = InterruptCounter()
        let signals = SignalWatcher { _ in
            if interrupts.increment() > 1 { Foundation.exit(130) }  // a second Ctrl-C: leave now
            runtime.interrupt()
        }
        // The last resort: a state its limits cannot stop (a looping finalizer, an unguarded C
        // loop) cannot be stopped from here either; say which limit it passed and leave.
        let grace = options.stallGrace
        let watchdog = Task.detached {
            guard let reason = await runtime.waitForStall(grace: grace) else { return }
            FileHandleOutput.standardError.write("lookout: \(name): \(reason); exiting\n")
            Foundation.exit(1)
        }
        defer { watchdog.cancel() }
        let outcome: LuaRunOutcome
        if let code {
            outcome = await runtime.run(source: Array(code.utf8), chunkName: "=(command line)")
        } else {
            outcome = await runtime.run(file: arguments[0])
        }
        signals.cancel()
        await runtime.close()
        if let message = outcome.message {
            FileHandleOutput.standardError.write("lookout: \(message)\n")
        }
        if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
    }
}

/// Counts signals across threads.
final class InterruptCounter: Sendable {
    private let count = Locked(0)

    /// Adds one and returns the new count.
    func increment() -> Int { count.withLock { $0 += 1; return $0 } }
}
