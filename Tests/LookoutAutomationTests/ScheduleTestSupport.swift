import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutAutomation
@testable import LookoutModules

/// A script with the `schedule` module running in its own runtime until `stop()`.
struct ScheduleHarness {
    let runtime: LuaRuntime
    let transcript: Transcript
    let health: HealthRegistry
    let name: String
    let running: Task<LuaRunOutcome, Never>

    /// Starts `source`; jobs look at the (manual) clock every 5 ms.
    static func start(
        _ source: String, clock: ManualClock, config: HostConfig = HostConfig(), paths: LookoutPaths? = nil,
        name: String = "jobs.lua"
    ) async throws -> ScheduleHarness {
        let transcript = Transcript()
        let health = HealthRegistry()
        var module = ScheduleModule(
            config: config, paths: paths ?? LookoutPaths(configFile: "/nonexistent/config.toml", stateDirectory: "/nonexistent"),
            health: health, persistent: paths != nil)
        module.recheck = 0.005
        let options = testOptions(transcript, name: name) { $0.clock = clock.lua }
        let runtime = LuaRuntime(options: options, modules: [module])
        try await runtime.start()
        let running = Task { await runtime.run(source: Array(("local schedule = require 'schedule'\n" + source).utf8), chunkName: "@" + name) }
        return ScheduleHarness(runtime: runtime, transcript: transcript, health: health, name: name, running: running)
    }

    /// The job as health reports it.
    func job(_ jobName: String) -> HealthRegistry.Job? {
        health.script(name)?.jobs.first { $0.name == jobName }
    }

    /// Polls `condition` until it holds (fails after `timeout` seconds).
    func waitFor(
        _ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else {
                XCTFail("timed out waiting for \(what); errors: \(transcript.errors.map(\.description)); lines: \(transcript.lines)",
                        file: file, line: line)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Polls an async `condition` until it holds (fails after `timeout` seconds).
    func waitForAsync(
        _ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line, _ condition: () async -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !(await condition()) {
            guard Date() < deadline else {
                XCTFail("timed out waiting for \(what)", file: file, line: line)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Stops the script and closes the state.
    @discardableResult
    func stop() async -> LuaRunOutcome {
        runtime.interrupt()
        let outcome = await running.value
        await runtime.close()
        return outcome
    }
}
