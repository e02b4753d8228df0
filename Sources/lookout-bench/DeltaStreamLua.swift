import Foundation
import Logging
import LookoutAutomation
import LookoutConfig
import LookoutWire
import Lua

/// How far a P4 Lua consumer got: the script reports its count through `bench_progress(n)`
/// (`0` once its handler or loop is registered); the flood waits on it to stay a window ahead.
final class DeltaStreamProgress: Sendable {
    private struct State {
        var count = -1
        var ended = false
        var lastChange = BenchClock.monotonic()
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    func report(_ n: Int) {
        let wake = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.count = max(s.count, n)
            s.lastChange = BenchClock.monotonic()
            let count = s.count
            defer { s.waiters.removeAll { $0.0 <= count } }
            return s.waiters.filter { $0.0 <= count }.map(\.1)
        }
        for w in wake { w.resume() }
    }

    /// The script ended: every waiter wakes up.
    func end() {
        let wake = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.ended = true
            defer { s.waiters = [] }
            return s.waiters.map(\.1)
        }
        for w in wake { w.resume() }
    }

    /// Back to "not registered yet" for the next script.
    func reset() {
        state.withLock {
            $0.count = -1
            $0.ended = false
            $0.lastChange = BenchClock.monotonic()
        }
    }

    var current: Int { state.withLock { $0.count } }
    var hasEnded: Bool { state.withLock { $0.ended } }
    var secondsSinceChange: Double { state.withLock { BenchClock.monotonic() - $0.lastChange } }

    /// Returns once the count reached `n` (or the script ended).
    func wait(atLeast n: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.count >= n || s.ended { return true }
                s.waiters.append((n, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// A Lookout `LuaRuntime` with the `signalk` module (as `lookout run` gives scripts) and the P4
/// hooks `bench_progress(n)` and `bench_now()` (monotonic seconds).
struct DeltaStreamScript {
    let runtime: LuaRuntime
    let progress = DeltaStreamProgress()
    private let lines: LineBox

    /// - Parameter report: also told each `bench_progress(n)`, on the script's executor (the feeder's pipe).
    /// - Parameter reusesThreads: ``LuaOptions/reusesThreads`` (off to measure what it saves).
    static func start(name: String, reusesThreads: Bool = true, report: @escaping @Sendable (Int) -> Void) async throws -> DeltaStreamScript {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p4-lua-\(getpid())").path
        let paths = LookoutPaths(configFile: directory + "/config.toml", stateDirectory: directory)
        let modules = HostModules.all(config: HostConfig(), paths: paths, logger: Logger(label: "lookout-bench"))
            .filter { $0.name == "signalk" }
        guard !modules.isEmpty else { throw BenchFailure("HostModules has no signalk module") }
        let lines = LineBox()
        var options = LuaOptions()
        options.name = name
        options.cpuLimit = 0
        options.memoryLimit = 0
        options.timeLimit = 300  // a stalled consumer ends instead of hanging the run
        options.reusesThreads = reusesThreads
        options.output = { lines.append($0) }
        options.errors = { lines.append(error: $0.description) }
        options.warnings = { lines.append(error: "warning: \($0)") }
        let runtime = LuaRuntime(options: options, modules: modules)
        try await runtime.start()
        let script = DeltaStreamScript(runtime: runtime, lines: lines)
        let progress = script.progress
        await runtime.withEngine { engine in
            engine.pushFunction("bench_progress") { call in
                let n = Int(try call.integer(1))
                report(n)
                progress.report(n)
                return .values(0)
            }
            engine.setGlobal("bench_progress")
            engine.pushFunction("bench_now") { call in call.returning(.double(BenchClock.monotonic())) }
            engine.setGlobal("bench_now")
        }
        return script
    }

    private init(runtime: LuaRuntime, lines: LineBox) {
        self.runtime = runtime
        self.lines = lines
    }

    /// Runs `source` as the main task until every task ended; `feed` runs meanwhile (it floods).
    /// - Returns: the `key=value` figures the script printed.
    func run(_ source: String, chunkName: String, feed: @escaping @Sendable (DeltaStreamProgress) async throws -> Void)
        async throws -> [String: Double]
    {
        let runtime = self.runtime, progress = self.progress
        progress.reset()
        let running = Task {
            let outcome = await runtime.run(source: Array(source.utf8), chunkName: chunkName)
            progress.end()
            return outcome
        }
        var feedError: (any Error)?
        do { try await feed(progress) } catch { feedError = error }
        let outcome = await running.value
        let (printed, errors) = lines.take()
        if outcome.exitCode != 0 || !errors.isEmpty {
            let detail = ([outcome.message].compactMap { $0 } + errors).joined(separator: "\n")
            throw BenchFailure("\(chunkName) failed (exit \(outcome.exitCode)): \(detail)")
        }
        if let feedError { throw feedError }
        var values: [String: Double] = [:]
        for line in printed {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    func close() async { await runtime.close() }
}

/// Lines and errors a script produced.
private final class LineBox: Sendable {
    private let output = Locked((lines: [String](), errors: [String]()))

    func append(_ line: String) { output.withLock { $0.lines.append(line) } }
    func append(error: String) { output.withLock { $0.errors.append(error) } }
    func take() -> ([String], [String]) {
        output.withLock { output in defer { output = ([], []) }; return (output.lines, output.errors) }
    }
}
