import Foundation
import LookoutWire
import Logging
import LookoutAutomation
import LookoutConfig
import LookoutModules
import Lua
import ReadyScripts

/// The ready automations the demo runs, each in its own Lua state, as `lookout serve` would.
final class DemoScripts: Sendable {
    /// The scripts, in the order the view lists them.
    static let names = ["low-alert.lua", "nightscout-to-signalk.lua", "signalk-to-nightscout.lua"]

    struct Running: Sendable {
        let name: String
        let runtime: LuaRuntime
        let task: Task<LuaRunOutcome, Never>
    }

    private let running: Locked<[Running]> = Locked([])
    private let states: Locked<[String: String]> = Locked([:])
    /// What the web view shows of the scripts (as `serve` keeps it).
    let health = HealthRegistry()

    /// Where the ready scripts are: `Scripts/` in the current folder, or next to the build folder
    /// that holds this executable (`swift run` from a checkout: edits there show in the demo);
    /// otherwise the copies the binary carries, written into `home` (the demo's temporary folder).
    static func folder(home: String) throws -> String {
        if let checkout = checkoutFolder() { return checkout }
        let folder = home + "/scripts"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in names {
            guard let source = ReadyScripts.all[name] else { continue }
            try Data(source).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        return folder
    }

    private static func checkoutFolder() -> String? {
        var candidates = [FileManager.default.currentDirectoryPath + "/Scripts"]
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(dir.appendingPathComponent("Scripts").path)
            dir = dir.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/nightscout-to-signalk.lua") }
    }

    /// Starts every script found in `folder` on story time (`clock`); errors and prints go to `log`.
    func start(folder: String, environment: HostEnvironment, logger: Logger, log: DemoLog, clock: DemoClock,
               lines: ScriptLogLines? = nil) async {
        for name in Self.names {
            let file = folder + "/" + name
            guard FileManager.default.fileExists(atPath: file) else {
                states.withLock { $0[name] = "not found" }
                continue
            }
            var options = LuaOptions()
            options.name = name
            options.scriptDirectory = folder
            options.suggest = { ConfigWording.suggestion(for: $0, among: $1) }  // "did you mean" for a mistyped method
            options.clock = LuaClock { clock.now() }  // story time: "for 15 min", not "for 3s"
            options.output = { log.add("\(name): \($0)"); lines?.append(script: name, $0) }
            options.errors = { error in log.add("error \(name): \(error.message)"); lines?.append(script: name, "error: \(error.message)") }
            options.warnings = { log.add("warning \(name): \($0)"); lines?.append(script: name, "warning: \($0)") }
            let runtime = LuaRuntime(options: options, modules: HostModules.all(
                config: environment.config, paths: environment.paths, logger: logger, health: health))
            do { try await runtime.start() } catch {
                states.withLock { $0[name] = "cannot start: \(error)" }
                health.updateScript(name) { $0.state = .crashed; $0.lastError = "cannot start: \(error)" }
                continue
            }
            states.withLock { $0[name] = "running" }
            health.updateScript(name) { $0.state = .running }
            let task = Task { [states, health] in
                let outcome = await runtime.run(file: file)
                states.withLock { $0[name] = outcome.exitCode == 0 ? "finished" : "stopped (exit \(outcome.exitCode))" }
                health.updateScript(name) { entry in
                    entry.state = outcome.exitCode == 0 ? .finished : .stopped
                    entry.lastError = outcome.message
                }
                if let message = outcome.message { log.add("error \(name): \(message)") }
                return outcome
            }
            running.withLock { $0.append(Running(name: name, runtime: runtime, task: task)) }
        }
    }

    /// Each script's state in plain words.
    var summary: [(String, String)] { states.withLock { s in Self.names.map { ($0, s[$0] ?? "not started") } } }

    /// Interrupts every script and waits for it to end.
    func stop() async {
        let all = running.withLock { $0 }
        for r in all { r.runtime.interrupt() }
        for r in all {
            _ = await r.task.value
            await r.runtime.close()
        }
    }
}
