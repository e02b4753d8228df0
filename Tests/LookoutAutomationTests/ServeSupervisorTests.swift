import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutAutomation
@testable import LookoutModules

/// `ServeSupervisor`: scripts side by side, crashes, restarts with backoff, reload, drain (R4).
final class ServeSupervisorTests: XCTestCase {
    private var directory: String!

    override func setUp() async throws {
        directory = NSTemporaryDirectory() + "lookout-serve-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func write(_ name: String, _ source: String) throws {
        try source.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
    }

    /// A supervisor over the test folder with small limits and fast restarts.
    private func supervisor(_ log: Transcript, health: HealthRegistry) -> ServeSupervisor {
        let paths = LookoutPaths(configFile: directory + "/config.toml", stateDirectory: directory + "/state")
        let factory = ServeScriptFactory(
            options: { file in
                var options = LuaOptions()
                let name = (file as NSString).lastPathComponent
                options.name = name
                options.memoryLimit = 16 << 20
                options.cpuLimit = 0.3
                options.output = { log.print("[\(name)] \($0)") }
                options.warnings = { log.warn($0) }
                return options
            },
            modules: { _ in
                var schedule = ScheduleModule(config: HostConfig(), paths: paths, health: health, persistent: false)
                schedule.recheck = 0.05
                return [schedule]
            })
        var settings = ServeSettings()
        settings.backoffStart = 0.2
        settings.backoffLimit = 0.4
        settings.pollInterval = 0.05
        settings.drainDeadline = 2
        return ServeSupervisor(
            discovery: ScriptDiscovery(paths: [directory]), factory: factory, settings: settings, health: health,
            log: { line in
                log.print(line)
                if ProcessInfo.processInfo.environment["LOOKOUT_TEST_VERBOSE"] != nil { FileHandle.standardError.write(Data((line + "\n").utf8)) }
            })
    }

    private func waitFor(_ what: String, timeout: Double = 30, log: Transcript, file: StaticString = #filePath, line: UInt = #line,
                         _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else {
                XCTFail("timed out waiting for \(what); log:\n\(log.lines.joined(separator: "\n"))", file: file, line: line)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// R4: scripts that loop forever, allocate without bound, recurse deeply and throw in timers
    /// run beside a healthy script with `schedule.every`: the bad ones are stopped and reported
    /// with tracebacks (and restarted with backoff); the healthy one keeps its schedule.
    func testBadScriptsAreStoppedAndReportedWhileAHealthyOneKeepsItsSchedule() async throws {
        try write("healthy.lua", """
            local schedule = require "schedule"
            local n = 0
            schedule.every(1, function() n = n + 1; print("tick", n) end, { name = "tick" })
            """)
        try write("loop.lua", "local x = 0\nwhile true do x = x + 1 end\n")
        try write("alloc.lua", "local t = {}\nwhile true do t[#t + 1] = string.rep('x', 65536) .. #t end\n")  // big pieces: the memory limit comes long before the CPU limit, also under load
        try write("recurse.lua", "local function down(n) return 1 + down(n + 1) end\nprint(down(1))\n")
        try write("throws.lua", """
            timer.every(0.05, function() error("boom in a timer") end)
            """)
        let log = Transcript()
        let health = HealthRegistry()
        let serve = supervisor(log, health: health)
        await serve.start()
        let bad = ["loop.lua", "alloc.lua", "recurse.lua", "throws.lua"]
        try await waitFor("the bad scripts to be restarted and the healthy one to run 4 times", log: log) {
            bad.allSatisfy { (health.script($0)?.restarts ?? 0) >= 1 }
                && (health.script("healthy.lua")?.jobs.first?.runs ?? 0) >= 4
        }
        let healthy = try XCTUnwrap(health.script("healthy.lua"))
        XCTAssertEqual(healthy.state, .running)
        XCTAssertEqual(healthy.errors, 0)
        XCTAssertEqual(healthy.restarts, 0)
        XCTAssertEqual(healthy.jobs.first?.skipped, 0, "the healthy job never missed a beat")
        XCTAssertEqual(healthy.jobs.first?.lastOK, true)
        // Deep recursion ends in "stack overflow" or, first, the memory limit (the Lua stack grows).
        let expected = [
            "loop.lua": ["CPU limit exceeded"], "alloc.lua": ["not enough memory"],
            "recurse.lua": ["stack overflow", "not enough memory"], "throws.lua": ["boom in a timer"],
        ]
        for (name, fragments) in expected {
            let entry = try XCTUnwrap(health.script(name))
            XCTAssertTrue(fragments.contains { entry.lastError?.contains($0) ?? false }, "\(name): \(entry.lastError ?? "nil")")
            XCTAssertTrue(entry.traceback?.contains(name + ":") ?? false, "\(name) traceback: \(entry.traceback ?? "nil")")
            XCTAssertTrue(log.lines.contains { $0.hasPrefix(name + ": crashed (") && $0.contains("restarting in") }, name)
            XCTAssertTrue(log.lines.contains { $0.hasPrefix(name + ": error in ") && $0.contains("stack traceback:") }, name)
        }
        await serve.stop()
        XCTAssertEqual(health.script("healthy.lua")?.state, .stopped)
    }

    /// A syntax error is not restarted with backoff (the same file fails the same way): the
    /// script waits for its file to change, then runs the new version.
    func testASyntaxErrorWaitsForTheFileToChange() async throws {
        try write("bad.lua", "local x = = 1\n")
        let log = Transcript()
        let health = HealthRegistry()
        let serve = supervisor(log, health: health)
        await serve.start()
        try await waitFor("the syntax error to be reported", log: log) {
            log.lines.contains { $0.hasPrefix("bad.lua: cannot run (") && $0.hasSuffix("; waiting for the file to change") }
        }
        let entry = try XCTUnwrap(health.script("bad.lua"))
        XCTAssertEqual(entry.state, .crashed)
        XCTAssertNil(entry.nextRestart, "no restart is planned")
        XCTAssertTrue(entry.lastError?.contains("bad.lua:1:") ?? false, entry.lastError ?? "nil")
        XCTAssertFalse(log.lines.contains { $0.contains("restarting in") }, log.lines.joined(separator: "\n"))
        try write("bad.lua", "print('fixed')\n")
        try await waitFor("the fixed version to run", log: log) { log.lines.contains("[bad.lua] fixed") }
        XCTAssertEqual(health.script("bad.lua")?.restarts, 0)
        await serve.stop()
    }

    func testAChangedScriptIsReloadedAndANewOneStarts() async throws {
        try write("a.lua", """
            local schedule = require "schedule"
            schedule.every(60, function() print("version 1") end)
            """)
        let log = Transcript()
        let health = HealthRegistry()
        let serve = supervisor(log, health: health)
        await serve.start()
        try await waitFor("version 1", log: log) { log.lines.contains("[a.lua] version 1") }
        try write("a.lua", """
            local schedule = require "schedule"
            schedule.every(60, function() print("version 2, longer") end)
            """)
        try write("b.lua", "print('b started')\n")
        try await waitFor("version 2 and b", log: log) {
            log.lines.contains("[a.lua] version 2, longer") && log.lines.contains("[b.lua] b started")
        }
        XCTAssertTrue(log.lines.contains("a.lua: changed; reloading"))
        try await waitFor("b to finish", log: log) { health.script("b.lua")?.state == .finished }
        try FileManager.default.removeItem(atPath: directory + "/a.lua")
        try await waitFor("a to be removed", log: log) { health.script("a.lua") == nil }
        let files = await serve.files
        XCTAssertEqual(files.map { ($0 as NSString).lastPathComponent }, ["b.lua"])
        await serve.stop()
    }

    func testStopDrainsRunningTasksThenCancelsWhatIsLeft() async throws {
        try write("drain.lua", """
            local schedule = require "schedule"
            schedule.every(60, function()
              print("working")
              sleep(0.2)
              print("finished cleanly")
            end)
            """)
        try write("stuck.lua", """
            task.spawn(function()
              local guard <close> = setmetatable({}, { __close = function() print("closed") end })
              sleep(3600)
            end)
            """)
        let log = Transcript()
        let health = HealthRegistry()
        let serve = supervisor(log, health: health)
        await serve.start()
        try await waitFor("the run to start", log: log) {
            log.lines.contains("[drain.lua] working") && health.script("stuck.lua")?.state == .running
        }
        await serve.stop()
        XCTAssertTrue(log.lines.contains("[drain.lua] finished cleanly"), "the running task finished within the deadline")
        XCTAssertTrue(log.lines.contains("[stuck.lua] closed"), "a task past the deadline is cancelled; <close> runs")
        XCTAssertEqual(health.script("stuck.lua")?.state, .stopped)
    }
}
