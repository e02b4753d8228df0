import Foundation
import Lua

/// Collects what a script printed and the errors it reported.
public final class Transcript: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var _lines: [String] = []
    private var _errors: [LuaScriptError] = []
    private var _warnings: [String] = []

    public var lines: [String] { lock.withLock { _lines } }
    public var errors: [LuaScriptError] { lock.withLock { _errors } }
    public var warnings: [String] { lock.withLock { _warnings } }

    public init() {}

    public func print(_ line: String) { lock.withLock { _lines.append(line) } }
    public func error(_ error: LuaScriptError) { lock.withLock { _errors.append(error) } }
    public func warn(_ text: String) { lock.withLock { _warnings.append(text) } }
}

/// Options that send output and errors to a transcript.
public func testOptions(_ transcript: Transcript, name: String = "test.lua", configure: (inout LuaOptions) -> Void = { _ in }) -> LuaOptions {
    var options = LuaOptions()
    options.name = name
    options.output = { transcript.print($0) }
    options.errors = { transcript.error($0) }
    options.warnings = { transcript.warn($0) }
    configure(&options)
    return options
}

/// Runs Lua source in a fresh runtime and returns the transcript and outcome.
public func runLua(
    _ source: String, name: String = "test.lua", modules: [any LuaModule] = [],
    configure: (inout LuaOptions) -> Void = { _ in }
) async throws -> (Transcript, LuaRunOutcome) {
    let transcript = Transcript()
    let runtime = LuaRuntime(options: testOptions(transcript, name: name, configure: configure), modules: modules)
    try await runtime.start()
    let outcome = await runtime.run(source: Array(source.utf8), chunkName: "@\(name)")
    await runtime.close()
    return (transcript, outcome)
}
