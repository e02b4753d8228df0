import Foundation
import LookoutConfig
import LookoutWire
import Lua

/// Reads scenario files (Lua returning a table) in a sandboxed state of their own.
public enum ScenarioLoader {
    /// A built-in scenario by name, or a file; errors name the file and what was wrong.
    public static func load(_ nameOrFile: String) async throws -> Scenario {
        if let source = BuiltinScenarios.source(named: nameOrFile) {
            return try await load(source: source, chunkName: "=[scenario \(nameOrFile)]")
        }
        guard nameOrFile.hasSuffix(".lua") || FileManager.default.fileExists(atPath: nameOrFile) else {
            let guess = ConfigWording.suggestion(for: BuiltinScenarios.canonicalName(nameOrFile), among: BuiltinScenarios.names)
            throw ScenarioError("no scenario \"\(nameOrFile)\"" + (guess.map { " (did you mean \($0)?)" } ?? "")
                + ": give a file, or one of \(BuiltinScenarios.names.joined(separator: ", "))")
        }
        guard let data = FileManager.default.contents(atPath: nameOrFile) else {
            throw ScenarioError("cannot read scenario file \(nameOrFile)")
        }
        do {
            return try await load(source: String(decoding: data, as: UTF8.self), chunkName: "@" + nameOrFile)
        } catch let error as ScenarioError {
            throw ScenarioError("\(nameOrFile): \(error.description)")
        }
    }

    /// Runs scenario source and reads the table it returns.
    public static func load(source: String, chunkName: String) async throws -> Scenario {
        let capture = ScenarioCapture(source: source, chunkName: chunkName)
        var options = LuaOptions()
        options.name = "scenario"
        options.cpuLimit = 5
        options.timeLimit = 30
        options.errors = { capture.fail($0.message) }
        options.output = { _ in }
        let runtime = LuaRuntime(options: options, modules: [capture.module])
        try await runtime.start()
        let outcome = await runtime.run(
            source: Array("local s = require '_scenario'; s.set(assert(load(s.source(), s.chunk(), 't'))())".utf8),
            chunkName: "=[scenario loader]")
        await runtime.close()
        if let message = outcome.message ?? capture.error { throw ScenarioError(message) }
        guard let value = capture.value else { throw ScenarioError("the scenario file returned nothing; it must return a table") }
        return try Scenario.parse(value)
    }
}

/// Holds the source going in and the table coming out.
final class ScenarioCapture: Sendable {
    private let result = Locked((value: LuaValue?.none, error: String?.none))
    /// The scenario file's Lua text, handed to the loader chunk by `_scenario.source()`.
    public let source: String
    let chunkName: String

    init(source: String, chunkName: String) {
        self.source = source
        self.chunkName = chunkName
    }

    var value: LuaValue? { result.withLock { $0.value } }
    var error: String? { result.withLock { $0.error } }
    func fail(_ message: String) { result.withLock { if $0.error == nil { $0.error = message } } }

    struct Module: LuaModule {
        let capture: ScenarioCapture
        let name = "_scenario"
        let stub = "---@meta _scenario\n-- Internal: loads scenario files.\nlocal m = {}\nreturn m\n"

        func push(into engine: LuaEngine, stack: LuaStack) throws {
            let capture = self.capture
            engine.pushLibrary([
                "source": { call in call.returning(.text(capture.source)) },
                "chunk": { call in call.returning(.text(capture.chunkName)) },
                "set": { call in
                    let value = try call.value(1, name: "scenario")
                    capture.result.withLock { $0.value = value }
                    return .nothing
                },
            ], prefix: "_scenario.", on: stack)
        }
    }

    var module: Module { Module(capture: self) }
}
