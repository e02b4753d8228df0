import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutAutomation

/// `schedule`: every/cron/at jobs, missed runs, no overlap, time zone, persistence, errors.
final class ScheduleModuleTests: XCTestCase {
    /// 2026-06-01 10:30:00 UTC.
    private let t0 = Date(timeIntervalSince1970: 1_780_309_800)

    private func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    func testEveryRunsAtOnceThenOncePerInterval() async throws {
        let clock = ManualClock(t0)
        let h = try await ScheduleHarness.start("""
            local job = schedule.every("5m", function(job) print("run", job.name) end)
            print(job.name, job.kind, job.spec, job:running(), job:busy())
            """, clock: clock)
        try await h.waitFor("first run") { h.job("every 5m")?.runs == 1 && h.job("every 5m")?.lastOK == true }
        XCTAssertEqual(h.job("every 5m")?.next, t0.addingTimeInterval(300))
        clock.advance(300)
        try await h.waitFor("second run") { h.job("every 5m")?.runs == 2 }
        XCTAssertEqual(h.job("every 5m")?.next, t0.addingTimeInterval(600), "cadence counts from the due time")
        XCTAssertEqual(h.job("every 5m")?.skipped, 0)
        await h.stop()
        XCTAssertEqual(h.transcript.lines.prefix(2), ["every 5m\tevery\t5m\ttrue\tfalse", "run\tevery 5m"])
        XCTAssertEqual(h.transcript.errors.count, 0)
    }

    func testMissedRunsAfterASleepRunOnceNotABurst() async throws {
        let clock = ManualClock(t0)
        let h = try await ScheduleHarness.start(
            #"schedule.every("5m", function() end)"#, clock: clock)
        try await h.waitFor("first run") { h.job("every 5m")?.runs == 1 && h.job("every 5m")?.lastOK == true }
        clock.advance(3 * 3600)  // the machine slept through 36 runs
        try await h.waitFor("the missed run") { h.job("every 5m")?.runs == 2 }
        XCTAssertEqual(h.job("every 5m")?.next, t0.addingTimeInterval(3 * 3600 + 300), "next run one interval after waking")
        await h.stop()
    }

    func testSkipPolicySkipsAMissedRun() async throws {
        let clock = ManualClock(t0)
        let h = try await ScheduleHarness.start(
            #"schedule.every("5m", function() end, { missed = "skip", name = "poll" })"#, clock: clock)
        try await h.waitFor("first run") { h.job("poll")?.runs == 1 && h.job("poll")?.lastOK == true }
        clock.advance(3 * 3600)
        try await h.waitFor("the skip") { h.job("poll")?.skipped == 1 }
        XCTAssertEqual(h.job("poll")?.runs, 1)
        XCTAssertEqual(h.job("poll")?.skipped, 1)
        XCTAssertEqual(h.job("poll")?.next, t0.addingTimeInterval(3 * 3600 + 300))
        clock.advance(300)
        try await h.waitFor("the next regular run") { h.job("poll")?.runs == 2 }
        await h.stop()
    }

    func testARunNeverOverlapsThePreviousOne() async throws {
        let clock = ManualClock(t0)
        let h = try await ScheduleHarness.start("""
            schedule.every("1m", function() print("start"); sleep(3600) end, { name = "slow" })
            """, clock: clock)
        try await h.waitFor("first run") { h.job("slow")?.runs == 1 }
        clock.advance(60)
        try await h.waitFor("a skipped run") { h.job("slow")?.skipped == 1 }
        clock.advance(60)
        try await h.waitFor("another skipped run") { h.job("slow")?.skipped == 2 }
        XCTAssertEqual(h.job("slow")?.runs, 1)
        XCTAssertNil(h.job("slow")?.lastOK, "still running")
        await h.stop()
        XCTAssertEqual(h.transcript.lines, ["start"])
    }

    func testCronAndAtUseTheConfiguredTimeZone() async throws {
        let clock = ManualClock(t0)  // 10:30 UTC = 06:30 in New York (EDT)
        let config = try HostConfig(text: "[serve]\ntimezone = \"America/New_York\"\n")
        let h = try await ScheduleHarness.start("""
            local a = schedule.at("07:00", function() print("good morning") end)
            local c = schedule.cron("0 */6 * * *", function() end)
            local w = schedule.at("Sat 09:00", function() end)
            print(schedule.timezone, a:next(), c:next(), w:next())
            """, clock: clock, config: config)
        try await h.waitFor("the job list") { h.job("at 07:00")?.next != nil && h.job("cron 0 */6 * * *")?.next != nil && h.job("at Sat 09:00")?.next != nil }
        let sevenNY = t0.addingTimeInterval(1800)        // 11:00 UTC
        let twelveNY = t0.addingTimeInterval(5.5 * 3600) // 12:00 New York = 16:00 UTC
        let saturday = Date(timeIntervalSince1970: 1_780_750_800) // Sat 2026-06-06 09:00 EDT = 13:00 UTC
        XCTAssertEqual(h.job("at 07:00")?.next, sevenNY)
        XCTAssertEqual(h.job("cron 0 */6 * * *")?.next, twelveNY)
        XCTAssertEqual(h.job("at Sat 09:00")?.next, saturday)
        XCTAssertEqual(h.job("at 07:00")?.runs, 0, "a cron job does not run at start")
        clock.set(sevenNY)
        try await h.waitFor("the 07:00 run") { h.job("at 07:00")?.runs == 1 }
        XCTAssertEqual(h.job("at 07:00")?.next, sevenNY.addingTimeInterval(86_400))
        await h.stop()
        XCTAssertTrue(h.transcript.lines.contains("good morning"))
        XCTAssertTrue(h.transcript.lines.first?.hasPrefix("America/New_York\t") ?? false, "\(h.transcript.lines)")
    }

    func testErrorsInARunAreReportedWithTracebackAndTheJobGoesOn() async throws {
        let clock = ManualClock(t0)
        let h = try await ScheduleHarness.start("""
            local function check() error("sensor unplugged") end
            schedule.every("5m", function() check() end, { name = "check" })
            """, clock: clock)
        try await h.waitFor("the failed run") { h.job("check")?.lastOK == false }
        XCTAssertTrue(h.job("check")?.lastError?.contains("sensor unplugged") ?? false)
        clock.advance(300)
        try await h.waitFor("the next run") { h.job("check")?.runs == 2 && h.transcript.errors.count == 2 }
        await h.stop()
        let error = h.transcript.errors[0]
        XCTAssertTrue(error.task.hasPrefix("schedule job 'check' (every 5m) created at jobs.lua:3"), error.task)
        XCTAssertTrue(error.traceback.contains("jobs.lua:2: in"), error.traceback)
    }

    func testJobsListNamesAndStop() async throws {
        let clock = ManualClock(t0)
        let h = try await ScheduleHarness.start("""
            local a = schedule.every("5m", function() end)
            local b = schedule.every("5m", function() end)
            schedule.cron("@hourly", function() end, { name = "hourly" })
            print(a.name, b.name)
            print(b:stop(), b:stop(), b:running(), b:next())
            local names = {}
            for _, j in ipairs(schedule.jobs()) do names[#names + 1] = j.name .. "=" .. j.kind .. ":" .. j.spec end
            print(table.concat(names, ","))
            local ok, err = pcall(function() return b.nothing() end)
            print(ok)
            """, clock: clock)
        try await h.waitFor("the job list") { h.job("hourly")?.next != nil }
        let outcome = await h.stop()
        XCTAssertEqual(h.transcript.lines, [
            "every 5m\tevery 5m #2", "true\tfalse\tfalse\tnil", "every 5m=every:5m,hourly=cron:@hourly", "false",
        ])
        XCTAssertEqual(h.transcript.errors.count, 0, "\(h.transcript.errors)")
        XCTAssertEqual(outcome.exitCode, 130)
    }

    func testAScriptWhoseJobsStopEndsOnItsOwn() async throws {
        let clock = ManualClock(t0)
        let h = try await ScheduleHarness.start("""
            local n = 0
            schedule.every(60, function(job) n = n + 1; print("run", n); if n == 2 then job:stop() end end)
            """, clock: clock)
        try await h.waitFor("first run") { h.transcript.lines.count == 1 }
        clock.advance(60)
        let outcome = await h.running.value
        await h.runtime.close()
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(h.transcript.lines, ["run\t1", "run\t2"])
    }

    func testBadArgumentsSayWhatIsWrong() async throws {
        let (transcript, _) = try await runLua("""
            local schedule = require "schedule"
            local f = function() end
            local function try(fn, ...) local ok, err = pcall(fn, ...); print(ok, err) end
            try(schedule.cron, "61 * * * *", f)
            try(schedule.cron, "* * *", f)
            try(schedule.every, "soon", f)
            try(schedule.every, 0.5, f)
            try(schedule.at, "25:00", f)
            try(schedule.at, "07:00")
            try(schedule.every, "5m", f, { missed = "twice" })
            try(schedule.every, "5m", f, { when = "now" })
            try(schedule.every, "5m", f, { name = 3 })
            """, modules: [ScheduleModule(config: HostConfig(), paths: LookoutPaths(configFile: "/x/c.toml", stateDirectory: "/x"), health: nil, persistent: false)])
        let lines = transcript.lines
        XCTAssertEqual(lines.count, 9)
        let expected = [
            "cron minute field \"61\": 61 is out of range 0-59",
            "has 3 fields; expected 5",
            "invalid interval \"soon\"",
            "interval 500ms is too short",
            "invalid time \"25:00\"",
            "function expected",
            "opts.missed must be \"once\" or \"skip\", got \"twice\"",
            "unknown option 'when' (known: name, missed)",
            "opts.name must be a non-empty string",
        ]
        for (line, fragment) in zip(lines, expected) {
            XCTAssertTrue(line.hasPrefix("false\t") && line.contains(fragment), "\(line) should contain \(fragment)")
        }
    }

    func testARestartedHostKnowsTheLastRun() async throws {
        let directory = NSTemporaryDirectory() + "lookout-schedule-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = LookoutPaths(configFile: directory + "/config.toml", stateDirectory: directory + "/state")
        let store = try StateStore.shared(paths: paths)
        let source = #"schedule.cron("0 * * * *", function() end, { name = "hourly", missed = MISSED })"#
        // First host: runs at 11:00.
        let clock = ManualClock(t0)
        let first = try await ScheduleHarness.start(source.replacingOccurrences(of: "MISSED", with: "\"once\""), clock: clock, paths: paths)
        try await first.waitFor("the job") { first.job("hourly")?.next != nil }
        XCTAssertEqual(first.job("hourly")?.runs, 0)
        clock.set(t0.addingTimeInterval(1800))
        try await first.waitFor("the 11:00 run") { first.job("hourly")?.lastOK == true }
        await first.stop()
        let key = "jobs.lua/hourly"
        try await first.waitForAsync("the saved record") {
            // The record is written asynchronously; poll the database.
            let saved = try? await store.value(script: ScheduleRecords.namespace, key: key)
            return saved.map { String(decoding: $0, as: UTF8.self).contains("\"last_ok\":true") } ?? false
        }
        // Second host at 14:10: 12:00, 13:00 and 14:00 were missed: one run at once, next at 15:00.
        clock.set(t0.addingTimeInterval(3 * 3600 + 40 * 60))
        let second = try await ScheduleHarness.start(source.replacingOccurrences(of: "MISSED", with: "\"once\""), clock: clock, paths: paths)
        try await second.waitFor("the catch-up run") { second.job("hourly")?.runs == 1 }
        XCTAssertEqual(second.job("hourly")?.next, t0.addingTimeInterval(4.5 * 3600))
        await second.stop()
        // Third host, same time, policy skip: the run at 14:10 already happened, so nothing is
        // missed; move on to 17:05 (15:00, 16:00, 17:00 missed) and it skips.
        clock.set(t0.addingTimeInterval(6.5 * 3600 + 300))
        try await second.waitForAsync("the saved catch-up record") {
            let saved = try? await store.value(script: ScheduleRecords.namespace, key: key)
            return saved.map { String(decoding: $0, as: UTF8.self).contains("\"last_run\":\(ms(t0.addingTimeInterval(3 * 3600 + 40 * 60)))") } ?? false
        }
        let third = try await ScheduleHarness.start(source.replacingOccurrences(of: "MISSED", with: "\"skip\""), clock: clock, paths: paths)
        try await third.waitFor("the skipped run") { third.job("hourly")?.skipped == 1 }
        XCTAssertEqual(third.job("hourly")?.runs, 0)
        XCTAssertEqual(third.job("hourly")?.next, t0.addingTimeInterval(7.5 * 3600))
        await third.stop()
    }
}
