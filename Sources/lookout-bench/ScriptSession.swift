import Foundation
import LookoutWire
import Lua

/// A Lookout `LuaRuntime` (the sandboxed state scripts get) whose printed lines and errors are
/// collected, so benchmark chunks can report figures with `print("key=value")`.
struct ScriptSession: Sendable {
    /// The runtime; its engine is reachable with `withEngine`.
    let runtime: LuaRuntime
    private let transcript: Transcript

    /// Makes and starts a runtime.
    /// - Parameter configure: adjusts the options (limits) before the state is made.
    static func start(name: String, configure: (inout LuaOptions) -> Void = { _ in }) async throws -> ScriptSession {
        let transcript = Transcript()
        var options = LuaOptions()
        options.name = name
        options.output = { transcript.append(line: $0) }
        options.errors = { transcript.append(error: $0.description) }
        options.warnings = { transcript.append(error: "warning: \($0)") }
        configure(&options)
        let runtime = LuaRuntime(options: options)
        try await runtime.start()
        return ScriptSession(runtime: runtime, transcript: transcript)
    }

    /// Runs a chunk as the main task until it and every task it started have ended.
    /// - Returns: the `key=value` pairs the chunk printed (other lines are ignored).
    /// - Throws: `BenchFailure` with the script's errors when any task failed.
    func run(_ source: String, chunkName: String) async throws -> [String: Double] {
        transcript.reset()
        let outcome = await runtime.run(source: Array(source.utf8), chunkName: chunkName)
        let (lines, errors) = transcript.take()
        if outcome.exitCode != 0 || !errors.isEmpty {
            let detail = ([outcome.message].compactMap { $0 } + errors).joined(separator: "\n")
            throw BenchFailure("\(chunkName) failed (exit \(outcome.exitCode)): \(detail)")
        }
        var values: [String: Double] = [:]
        for line in lines {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// Frees the state and stops its thread.
    func close() async { await runtime.close() }
}

/// Lines and errors a script produced.
private final class Transcript: Sendable {
    private let output = Locked((lines: [String](), errors: [String]()))

    func append(line: String) { output.withLock { $0.lines.append(line) } }
    func append(error: String) { output.withLock { $0.errors.append(error) } }
    func reset() { output.withLock { $0 = ([], []) } }
    func take() -> ([String], [String]) { output.withLock { ($0.lines, $0.errors) } }
}

/// Reads a figure a chunk printed, or fails naming it.
func figure(_ values: [String: Double], _ key: String) throws -> Double {
    guard let value = values[key] else { throw BenchFailure("the benchmark chunk did not report \(key)") }
    return value
}
