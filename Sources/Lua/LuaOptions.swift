/// How a Lua state is set up: its limits, sandbox and where its output goes.
public struct LuaOptions: Sendable {
    /// The script's name, used as log prefix and in task labels (`alerts.lua`).
    public var name: String = "lookout"
    /// Bytes the state may allocate; 0 = no limit.
    public var memoryLimit: Int = 64 << 20
    /// Requests to servers (``LuaCall/request(_:_:deliver:)``) the state runs at once; more wait
    /// for a slot (at most eight times as many), beyond that they fail with `err.code == "limit"`.
    public var requestsInFlight: Int = 32
    /// Seconds a task may compute without waiting; 0 = no limit.
    public var cpuLimit: Double = 5
    /// Wall-clock seconds for the whole run; 0 = no limit.
    public var timeLimit: Double = 0
    /// Seconds past a limit after which a state that did not stop counts as stuck
    /// (``LuaRuntime/stall(grace:now:)``): `run` exits, `serve` quarantines the script.
    public var stallGrace: Double = 2
    /// The whole standard library (`io`, `os`, `debug`, finalizers, every `collectgarbage` option):
    /// the user's own scripts only.
    public var trusted = false
    /// Folder `require` searches besides the bundled modules.
    public var scriptDirectory: String?
    /// Values of the `arg` table (`arg[0]` is the script).
    public var arguments: [String] = []
    /// Sets the conveniences `json`, `timer`, `sleep`, `task`, `log` as globals.
    public var conveniences = true
    /// Wall-clock time for scripts and modules (virtual under a test runner).
    public var clock: LuaClock = .system
    /// Keeps host frames in tracebacks.
    public var verbose = false
    /// Runs a handler per event (``LuaEngine/spawnCall(of:on:label:reportErrors:reusesThreads:_:)``)
    /// on a thread an earlier call returned from without waiting, instead of a new coroutine each
    /// time. Off only to measure what it saves (`lookout-bench` P4).
    public var reusesThreads = true
    /// Bytes of one `print` or `log` line kept (the rest cut with a marker); 0 = no limit (the
    /// default; Lookout's commands set `[limits] log_line`).
    public var outputLineLimit = 0
    /// Lines a second the script may print or log after `outputBurst`; 0 = no limit (the
    /// default; Lookout's commands set `[limits] log_rate`).
    public var outputRate: Double = 0
    /// Lines the script may print or log at once.
    public var outputBurst = 500
    /// The cluster lease the script runs under (`serve --cluster`); nil = not in a cluster.
    public var lease: (any LuaLease)?
    /// Receives what `print` writes (one call per line printed, without the newline).
    public var output: @Sendable (String) -> Void = { print($0) }
    /// Receives errors nobody handled, with task label and traceback.
    public var errors: @Sendable (LuaScriptError) -> Void = { error in
        FileHandleOutput.standardError.write(error.description + "\n")
    }
    /// Told when a task whose errors would be reported (the main chunk, a timer's run, an event
    /// handler) ends without error, with the task as ``LuaScriptError/task`` names it: `serve`
    /// marks the script's last success and clears an error that task had reported. Nil: nobody.
    public var succeeded: (@Sendable (String) -> Void)?
    /// The known name closest to a mistyped one (a method name among an object's methods), for
    /// "did you mean"; nil when none is close. Lookout's commands pass `ConfigWording.suggestion`.
    public var suggest: @Sendable (String, [String]) -> String? = { _, _ in nil }
    /// Receives Lua warnings (`warn(...)`, errors in `__gc`).
    public var warnings: @Sendable (String) -> Void = { FileHandleOutput.standardError.write("warning: \($0)\n") }

    /// Default options.
    public init() {}
}

/// An error a task raised and nobody caught.
public struct LuaScriptError: Error, Sendable, CustomStringConvertible {
    /// The script.
    public var script: String
    /// The task, e.g. `timer created at alerts.lua:12`.
    public var task: String
    /// The error message.
    public var message: String
    /// `stack traceback:` and the frames, without host frames unless verbose.
    public var traceback: String

    public var description: String {
        "\(script): error in \(task): \(message)" + (traceback.isEmpty ? "" : "\n\(traceback)")
    }
}

/// Writes to a standard stream without buffering surprises.
public enum FileHandleOutput: Sendable {
    case standardOutput, standardError

    /// Writes text as UTF-8.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            let fd: Int32 = self == .standardOutput ? 1 : 2
            while offset < buffer.count {
                let n = systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
private func systemWrite(_ fd: Int32, _ p: UnsafePointer<UInt8>, _ n: Int) -> Int { Glibc.write(fd, p, n) }
#elseif canImport(Darwin)
import Darwin
private func systemWrite(_ fd: Int32, _ p: UnsafePointer<UInt8>, _ n: Int) -> Int { Darwin.write(fd, p, n) }
#endif
