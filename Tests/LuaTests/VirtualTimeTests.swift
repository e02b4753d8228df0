import Foundation
import Lua
import LookoutTestSupport
import XCTest

/// `LuaClock.virtual`: timers, `sleep` and the script's wall clock run on virtual time that jumps
/// when nothing else can happen, exactly and deterministically.
final class VirtualTimeTests: XCTestCase {
    /// 2026-11-22 00:00:00 UTC.
    let start = Date(timeIntervalSince1970: 1_795_305_600)

    private func runVirtual(_ source: String, time: LuaVirtualTime) async throws -> (Transcript, LuaRunOutcome) {
        try await runLua(source, modules: [TestKitModule()]) { options in
            options.clock = .virtual(time)
        }
    }

    func testEightHourSleepLoopRunsExactlyAndFast() async throws {
        let time = LuaVirtualTime(start: start)
        let (transcript, outcome) = try await runVirtual("""
            local t0, n = os.time(), 0
            for i = 1, 96 do
              sleep "5m"
              n = n + 1
              assert(os.time() - t0 == i * 300, "drift at " .. i .. ": " .. (os.time() - t0))
            end
            print(n, os.time() - t0, os.date("!%H:%M", os.time()), require("script").uptime())
            """, time: time)
        XCTAssertEqual(outcome.exitCode, 0, "\(transcript.errors)")
        XCTAssertEqual(transcript.lines, ["96\t28800\t08:00\t28800.0"])
        XCTAssertEqual(time.elapsed, 8 * 3600 * 1_000_000_000)
        XCTAssertEqual(time.now(), start.addingTimeInterval(8 * 3600))
    }

    func testTimersInterleaveDeterministically() async throws {
        let source = """
            local log = {}
            local t0 = os.time()
            local every = timer.every("7m", function() log[#log + 1] = "e" .. (os.time() - t0) // 60 end)
            timer.after("31m", function() log[#log + 1] = "a31" end)
            task.spawn(function()
              for _ = 1, 3 do sleep "10m"; log[#log + 1] = "s" .. (os.time() - t0) // 60 end
            end)
            sleep "34m"
            every:stop()
            print(table.concat(log, " "))
            """
        var outputs: [[String]] = []
        for _ in 0..<3 {
            let (transcript, outcome) = try await runVirtual(source, time: LuaVirtualTime(start: start))
            XCTAssertEqual(outcome.exitCode, 0, "\(transcript.errors)")
            outputs.append(transcript.lines)
        }
        XCTAssertEqual(outputs[0], ["e7 s10 e14 s20 e21 e28 s30 a31"])
        XCTAssertEqual(outputs[1], outputs[0])
        XCTAssertEqual(outputs[2], outputs[0])
    }

    func testClockWaitsForHostWork() async throws {
        // While Swift work runs (call.wait), virtual time stands still: a 1-hour timer cannot
        // overtake a real 50 ms wait.
        let time = LuaVirtualTime(start: start)
        let (transcript, outcome) = try await runVirtual("""
            local testkit = require "testkit"
            local t0, fired = os.time(), false
            timer.after("1h", function() fired = true end)
            local v = testkit.swift_sleep(0.05)
            print(v, os.time() - t0, fired)
            sleep "2h"
            print(os.time() - t0, fired)
            """, time: time)
        XCTAssertEqual(outcome.exitCode, 0, "\(transcript.errors)")
        XCTAssertEqual(transcript.lines, ["0.05\t0\tfalse", "7200\ttrue"])
    }

    func testEventWaitsDoNotHoldTheClock() async throws {
        // A task waiting for a stream's next message must not freeze the night.
        let time = LuaVirtualTime(start: start)
        let (transcript, outcome) = try await runVirtual("""
            local testkit = require "testkit"
            local t0, got = os.time(), nil
            task.spawn(function() testkit.event_wait(0.2); got = os.time() - t0; print("event", got) end)
            sleep "2h"
            print(os.time() - t0, got)
            """, time: time)
        XCTAssertEqual(outcome.exitCode, 0, "\(transcript.errors)")
        XCTAssertEqual(transcript.lines, ["7200\tnil", "event\t7200"])
    }

    func testYieldingTasksHoldTheClockUntilTheirTurn() async throws {
        // task.yield() lets others run; virtual time must not jump meanwhile.
        let (transcript, outcome) = try await runVirtual("""
            local n, t0 = 0, os.time()
            task.spawn(function() for _ = 1, 100 do task.yield(); n = n + 1 end end)
            sleep "1m"
            print(n, os.time() - t0)
            """, time: LuaVirtualTime(start: start))
        XCTAssertEqual(outcome.exitCode, 0, "\(transcript.errors)")
        XCTAssertEqual(transcript.lines, ["100\t60"])
    }

    func testAdvanceHandlerSeesEachJump() async throws {
        let time = LuaVirtualTime(start: start)
        let jumps = LockedJumps()
        time.setAdvanceHandler { date in jumps.append(date) }
        let (transcript, outcome) = try await runVirtual("""
            sleep "1m"; sleep "90s"; timer.after(30, function() end)
            """, time: time)
        XCTAssertEqual(outcome.exitCode, 0, "\(transcript.errors)")
        XCTAssertEqual(jumps.all.map { $0.timeIntervalSince(start) }, [60, 150, 180])
    }

    func testWallClockLimitStaysOnRealTime() async throws {
        // --time-limit stays on real time under a virtual clock: a host wait that never ends
        // holds virtual time still, and the run is stopped after about 0.3 s of real time.
        let time = LuaVirtualTime(start: start)
        let (transcript, outcome) = try await runLua("""
            local testkit, n = require "testkit", 0
            task.spawn(function() testkit.swift_sleep(30) end)
            while true do sleep "1h"; n = n + 1 end
            """, modules: [TestKitModule()]) { options in
            options.clock = .virtual(time)
            options.timeLimit = 0.3
        }
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertTrue(transcript.errors.contains { $0.message.contains("time limit exceeded") }, "\(transcript.errors)")
        XCTAssertEqual(time.elapsed, 0, "the pending host wait held the clock")
    }
}

/// Dates seen by an advance handler.
private final class LockedJumps: @unchecked Sendable {
    // @unchecked Sendable: `dates` is only touched with `lock` held.
    private let lock = NSLock()
    private var dates: [Date] = []
    func append(_ d: Date) { lock.withLock { dates.append(d) } }
    var all: [Date] { lock.withLock { dates } }
}
