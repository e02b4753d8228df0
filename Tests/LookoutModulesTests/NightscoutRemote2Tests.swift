import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import NightscoutKit
import XCTest

@testable import LookoutStore

/// Simulators for the Remote 2.0 Lua tests, started once and never stopped:
/// `auto`, `success`, `pumpmax` (receiving app works at once; pump maximum 10 U; one per test
/// that needs an OTP accepted, since Loop refuses a code used twice), `manual` (stepped by the test),
/// `late` (the phone's clock is 10 minutes ahead, so every OTP has expired when it looks),
/// `v1only` (no `/api/v2/remotecommands`). All have a Loop profile, so Remote 1.0 works too.
actor Remote2LuaSims {
    static let shared = Remote2LuaSims()
    private var running: [String: (NightscoutSimulator, URL)] = [:]

    func start(_ name: String) async throws -> (NightscoutSimulator, URL) {
        if let s = running[name] { return s }
        var o = NightscoutSimulator.Options(authFailDelay: .zero, loop: .init(pumpMaxBolus: 10))
        if name == "v1only" { o.loop.remoteCommands = false }
        if name == "late" { o.clock = { Date().addingTimeInterval(600) } }
        let sim = NightscoutSimulator(options: o)
        let url = try await sim.start()
        await sim.setRemoteAppMode(name == "manual" ? .manual : .automatic)
        await sim.seed("profile", [[
            "startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
            "loopSettings": ["deviceToken": "0123abcd", "bundleIdentifier": "com.LOOKOUT01.loopkit.Loop"],
        ]])
        running[name] = (sim, url)
        return (sim, url)
    }
}

/// `home:remote_command` / `home:remote_commands` (Remote 2.0) from Lua: dry runs, every state,
/// Loop's error messages, the capability check with and without fallback to 1.0, and the same
/// limits as 1.0 (an adversarial script mixing 1.0 and 2.0 sends).
final class NightscoutRemote2Tests: XCTestCase {
    /// Runs `source` against simulator `name` with profile `loop` configured by `settings`.
    private func run(_ source: String, sim name: String = "auto", settings: String, store: StateStore,
                     file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let (sim, url) = try await Remote2LuaSims.shared.start(name)
        return try await runRemoteScript(source, url: url, otpURL: sim.options.loop.otpURL, settings: settings, store: store,
                                         file: file, line: line)
    }

    private let live = """
        remote = "live"
        max_bolus = 12
        max_bolus_per_hour = 30
        max_carbs = 50
        max_carbs_per_hour = 100
        """

    func testDryRunSendsNothingAndIsAudited() async throws {
        let (sim, _) = try await Remote2LuaSims.shared.start("auto")
        let before = await sim.storedRemoteCommands().count
        let store = try StateStore()
        let lines = try await run("""
            local cmd = assert(loop:remote_command("bolus", 1.5))
            print(cmd.state, cmd.via, cmd.id, cmd.command, cmd.message)
            print(cmd:wait() == cmd, cmd:status())
            local _, err = loop:remote_command("bolus", 3)
            print(err.code, err.reason)
            """, settings: "max_bolus = 2\nmax_bolus_per_hour = 4", store: store)
        XCTAssertEqual(lines, [
            "dry_run\tv2\tnil\tbolus 1.5 U\tdry run: would send bolus 1.5 U",
            "true\tdry_run\tdry run: would send bolus 1.5 U",
            "refused\texceedsMaximum",
        ])
        let after = await sim.storedRemoteCommands().count
        XCTAssertEqual(after, before, "a dry run stores nothing")
        let phases = try await store.auditEntries().map(\.phase)
        XCTAssertEqual(phases, [.dryRun, .refused])
    }

    func testPendingToSuccessWithTogglesListingAndAudit() async throws {
        let (sim, _) = try await Remote2LuaSims.shared.start("success")
        let store = try StateStore()
        let lines = try await run("""
            local cmd = assert(loop:remote_command("bolus", 1.25))
            print(cmd.state, cmd.via, type(cmd.id), cmd.created ~= nil)
            assert(cmd:wait { timeout = 20, interval = 0.05 })
            print(cmd.state, cmd.message, cmd:status())
            local _, err = loop:remote_command("autobolus", true)
            print(err.code, err.reason)
            local t = assert(loop:remote_command("closed_loop", false))
            assert(t:wait { timeout = "20s", interval = 0.05 })
            print(t.command, t.state)
            local found = 0
            for _, c in ipairs(assert(loop:remote_commands { state = "success", since = cmd.created })) do
              if c.id == cmd.id or c.id == t.id then found = found + 1 end
            end
            print("listed", found, tostring(cmd):match("^nightscout remote command") ~= nil)
            """, sim: "success", settings: live + "\ntoggles = [\"closed_loop\"]", store: store)
        XCTAssertEqual(lines, [
            "pending\tv2\tstring\ttrue",
            "success\t\tsuccess\t",
            "refused\tnotConfigured",
            "closed loop off\tsuccess",
            "listed\t2\ttrue",
        ])
        let toggles = await sim.remoteAppToggles()
        XCTAssertFalse(toggles.closedLoop)
        let entries = try await store.auditEntries()
        XCTAssertEqual(entries.map(\.phase), [.attempted, .sent, .confirmed, .refused, .attempted, .sent, .confirmed])
        XCTAssertTrue(entries[1].detail.hasPrefix("remote command 2.0 "), entries[1].detail)
        XCTAssertTrue(entries[2].detail.contains("Success"), entries[2].detail)
    }

    func testErrorsCarryLoopsMessageAndAreAudited() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local cmd = assert(loop:remote_command("bolus", 11))
            local done = assert(cmd:wait { timeout = 20, interval = 0.05 })
            print(done.state, done.message)
            """, sim: "pumpmax", settings: live, store: store)
        XCTAssertEqual(lines, ["error\tBolus 11 U exceeds the pump's maximum bolus of 10 U"])
        let entries = try await store.auditEntries()
        XCTAssertEqual(entries.map(\.phase), [.attempted, .sent, .appError])
        XCTAssertTrue(entries.last!.detail.hasSuffix("Error: Bolus 11 U exceeds the pump's maximum bolus of 10 U"))

        let lateStore = try StateStore()
        let late = try await run("""
            local cmd = assert(loop:remote_command("carbs", 20, { absorption = 3 }))
            local done = assert(cmd:wait { timeout = 20, interval = 0.05 })
            print(done.state, (done.message:gsub("%d%d%d%d%d%d", "CODE")))
            """, sim: "late", settings: live, store: lateStore)
        XCTAssertEqual(late, ["error\tPassword CODE has expired"])
    }

    func testEveryStateIsVisibleAndWaitTimesOut() async throws {
        let (sim, _) = try await Remote2LuaSims.shared.start("manual")
        let store = try StateStore()
        let first = try await run("""
            local cmd = assert(loop:remote_command("override", "Exercise", { duration = "30m" }))
            local ok, err = cmd:wait { timeout = 0.2, interval = 0.05 }
            print(ok, err.code, err.state, cmd.state)
            print(select("#", pcall(cmd.wait, cmd, { forever = true })), (select(2, pcall(cmd.wait, cmd, { forever = true }))))
            """, sim: "manual", settings: live + "\noverrides = [\"Exercise\"]", store: store)
        XCTAssertEqual(first.first, "nil\ttimeout\tpending\tpending")
        XCTAssertTrue(first.last?.contains("unknown option 'forever'") ?? false, "\(first)")
        await sim.stepRemoteApp()
        let second = try await run("""
            local list = assert(loop:remote_commands { state = "in_progress", since = os.time() * 1000 - 60000 })
            print(#list, list[1].state, list[1].command, list[1]:status())
            """, sim: "manual", settings: live, store: store)
        XCTAssertEqual(second, ["1\tin_progress\toverride Exercise for 30 min\tin_progress\t"])
        await sim.stepRemoteApp()
        let third = try await run("""
            local list = assert(loop:remote_commands { since = "1m" })  -- a duration, as `lookout remote list --since`
            print(#list, assert(list[1]:wait { timeout = 5 }).state)
            """, sim: "manual", settings: live, store: store)
        XCTAssertEqual(third, ["1\tsuccess"])
        let phases = try await store.auditEntries().map(\.phase)
        XCTAssertEqual(phases, [.attempted, .sent, .confirmed], "the outcome is audited once, by whichever script sees it")
    }

    func testDeclinedAtTheTerminalStoresNothing() async throws {
        let (sim, url) = try await Remote2LuaSims.shared.start("manual")
        let before = await sim.storedRemoteCommands().count
        let (confirmation, asked) = decliningConfirmation()
        let store = try StateStore()
        let lines = try await runRemoteScript("""
            local _, err = loop:remote_command("closed_loop", true)
            print(err.code, err.message)
            """, url: url, otpURL: sim.options.loop.otpURL, settings: live + "\ntoggles = [\"closed_loop\"]", store: store,
            confirmation: confirmation)
        XCTAssertEqual(lines, ["declined\tnot sent: declined at the terminal"])
        XCTAssertEqual(asked.withLock { $0 }, ["Send closed loop on to loop (\(url.absoluteString))?"])
        let after = await sim.storedRemoteCommands().count
        XCTAssertEqual(after, before)
        let phases = try await store.auditEntries().map(\.phase)
        XCTAssertEqual(phases, [.attempted, .failed])
    }

    func testBadArgumentsRaiseNamingTheProblem() async throws {
        let lines = try await run("""
            for _, f in ipairs {
              function() return loop:remote_command("tempbasal", 1) end,
              function() return loop:remote_command("closed_loop", "yes") end,
              function() return loop:remote_command("bolus", 1, { fallback = "v3" }) end,
              function() return loop:remote_command("bolus", 1, { colour = "red" }) end,
              function() return loop:remote_commands { state = "done" } end,
            } do
              local ok, err = pcall(f)
              print(ok, (tostring(err):gsub("^.-: ", "")))
            end
            """, settings: live, store: try StateStore())
        XCTAssertEqual(lines.count, 5)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("false\t") }, "\(lines)")
        for (line, expected) in zip(lines, ["unknown command 'tempbasal'", "expected true (on) or false (off)", "opts.fallback",
                                            "unknown option 'colour'", "opts.state"]) {
            XCTAssertTrue(line.contains(expected), "\(line) should mention \(expected)")
        }
    }

    func testASiteWithoutRemote2GivesAClearErrorUnlessFallbackIsAllowed() async throws {
        let (sim, _) = try await Remote2LuaSims.shared.start("v1only")
        let pushesBefore = await sim.receivedLoopNotifications().count
        let store = try StateStore()
        let refused = try await run("""
            local _, err = loop:remote_command("bolus", 1)
            print(err.code, err.message)
            local _, err2 = loop:remote_commands {}
            print(err2.code, err2.message)
            local _, err3 = loop:remote_command("carbs", 10, { fallback = false })
            print(err3.code)
            """, sim: "v1only", settings: live, store: store)
        XCTAssertEqual(refused, [
            "unsupported\tremote commands 2.0 not supported by this site (set remote_fallback = \"v1\" to use Remote 1.0)",
            "unsupported\tremote commands 2.0 not supported by this site",
            "unsupported",
        ])
        let nothing = await sim.receivedLoopNotifications().count
        XCTAssertEqual(nothing, pushesBefore, "no fallback unless allowed")
        let auditedNothing = try await store.auditEntries()
        XCTAssertEqual(auditedNothing.count, 0)

        // Allowed by the call instead of the profile; 1.0's `wait` follows Loop's answer.
        let byArgument = try await run("""
            local c = assert(loop:remote_command("override", "Exercise", { fallback = "v1", wait = "20s" }))
            print(c.via, c.state, c.message)
            """, sim: "v1only", settings: live + "\noverrides = [\"Exercise\"]", store: store)
        XCTAssertEqual(byArgument, ["v1\tconfirmed\tLoop enacted it"])
        // Allowed by the profile.
        let fellBack = try await run("""
            local cmd = assert(loop:remote_command("bolus", 1.1))
            print(cmd.via, cmd.state, cmd.id, cmd.fallback)
            print(cmd:wait() == cmd)
            local _, err = loop:remote_command("closed_loop", false)
            print(err.code, err.message)
            """, sim: "v1only", settings: live + "\nremote_fallback = \"v1\"\ntoggles = [\"closed_loop\"]", store: store)
        XCTAssertEqual(fellBack, [
            "v1\tsent\tnil\tremote commands 2.0 not supported by this site; sent through Remote 1.0 (remote_fallback = \"v1\")",
            "true",
            "unsupported\tremote commands 2.0 not supported by this site, and Remote 1.0 cannot switch closed loop",
        ])
        let pushes = await sim.receivedLoopNotifications().dropFirst(pushesBefore).compactMap { $0.push?.payload }
        XCTAssertEqual(pushes.compactMap { $0["bolus-entry"]?.doubleValue }, [1.1])
        XCTAssertEqual(pushes.compactMap { $0["override-name"]?.stringValue }, ["Exercise"])
        let phases = try await store.auditEntries().map(\.phase)
        XCTAssertEqual(phases, [.attempted, .sent, .confirmed, .attempted, .sent])
    }

    func testTheHourlyBudgetCountsRemote1And2Together() async throws {
        let store = try StateStore()
        let lines = try await run("""
            print(assert(loop:bolus(2, { wait = false })).state)
            local _, err = loop:remote_command("bolus", 1.5)
            print(err.reason, err.message)
            print(assert(loop:remote_command("bolus", 1, { wait = "35s" })).state)  -- waits for the next one-time code
            local _, err2 = loop:bolus(0.5, { wait = false })
            print(err2.reason)
            """, settings: "remote = \"live\"\nmax_bolus = 2\nmax_bolus_per_hour = 3", store: store)
        XCTAssertEqual(lines, [
            "sent",
            "exceedsHourlyTotal\t1.5 more would make 3.5 in the last hour (already 2, limit 3)",
            "pending",
            "exceedsHourlyTotal",
        ])
        let refusals = try await store.auditEntries().filter { $0.phase == .refused }.count
        XCTAssertEqual(refusals, 2)
    }

    func testMinimumIntervalAndDuplicatesHoldAcrossBothPaths() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local r = assert(loop:bolus(0.7, { wait = false }))
            print("v1", r.state)
            local _, err = loop:remote_command("carbs", 5)
            print(err.reason)
            """, settings: live + "\nmin_interval = \"1h\"", store: store)
        XCTAssertEqual(lines, ["v1\tsent", "tooSoon"])
        let dupStore = try StateStore()
        let dup = try await run("""
            assert(loop:remote_command("bolus", 0.35))
            local _, err = loop:bolus(0.35, { wait = false })
            print(err.reason)
            local _, err2 = loop:remote_command("bolus", 0.35)
            print(err2.reason)
            """, settings: live + "\nduplicate_window = \"10m\"", store: dupStore)
        XCTAssertEqual(dup, ["duplicate", "duplicate"])
        let refusals = try await dupStore.auditLog().filter { $0.entry.phase == .refused }
            .flatMap { Array(repeating: $0.entry.reasonCode, count: 1 + $0.repeats) }
        XCTAssertEqual(refusals, ["duplicate", "duplicate"])
    }

    /// The 1.0 adversarial script (R7) pointed at 2.0: many tasks at once, mixing 1.0 and 2.0
    /// sends; nothing beyond the limits reaches the site and every refusal is audited.
    func testAdversarialScriptCannotExceedTheLimitsThroughRemote2() async throws {
        // A simulator of its own: Loop refuses a one-time code it has seen, and another test may
        // have used this 30 s period's code on the shared one.
        let (sim, _) = try await Remote2LuaSims.shared.start("adversarial")
        let storedBefore = await sim.storedRemoteCommands().count
        let pushesBefore = await sim.receivedLoopNotifications().count
        let store = try StateStore()
        let lines = try await run("""
            local function v2(...) local args = { ... }; return function() return loop:remote_command(table.unpack(args)) end end
            local tricks = {
              function() return loop:bolus(1, { wait = false }) end,
              v2("bolus", 1), v2("bolus", 2), v2("bolus", 2.01), v2("bolus", "1.5"), v2("bolus", -1),
              v2("bolus", 0/0), v2("bolus", math.huge), v2("bolus", 1e-300), v2("bolus", 0.005), v2("bolus", nil),
              function() return loop:carbs(30, { wait = false }) end,
              v2("carbs", 30), v2("carbs", 31), v2("carbs", "20"), v2("carbs", 10, { absorption = 1e9 }),
              v2("override", "Exercise "), v2("cancel_override"), v2("closed_loop", false), v2("autobolus", true),
            }
            """ + adversarialRoundsLua, sim: "adversarial", settings: """
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 3
            max_carbs = 30
            max_carbs_per_hour = 40
            """, store: store)
        let stored = await sim.storedRemoteCommands().dropFirst(storedBefore).compactMap { $0["action"]?.objectValue }
        let pushes = await sim.receivedLoopNotifications().dropFirst(pushesBefore).compactMap { $0.push?.payload }
        let bolus = stored.compactMap { $0["bolus"]?["amountInUnits"]?.doubleValue } + pushes.compactMap { $0["bolus-entry"]?.doubleValue }
        let carbs = stored.compactMap { $0["carbs"]?["amountInGrams"]?.doubleValue } + pushes.compactMap { $0["carbs-entry"]?.doubleValue }
        XCTAssertLessThanOrEqual(bolus.reduce(0, +), 3, "hourly bolus limit over 1.0 and 2.0: \(bolus)")
        XCTAssertTrue(bolus.allSatisfy { $0 > 0 && $0 <= 2 }, "\(bolus)")
        XCTAssertLessThanOrEqual(carbs.reduce(0, +), 40, "hourly carb limit over 1.0 and 2.0: \(carbs)")
        XCTAssertTrue(carbs.allSatisfy { $0 > 0 && $0 <= 30 }, "\(carbs)")
        // One command per one-time code: within one 30 s period a bolus or the carbs goes first.
        XCTAssertGreaterThan(bolus.count + carbs.count, 0, "the limits still let something through")
        XCTAssertEqual(stored.count + pushes.count, bolus.count + carbs.count, "no override or toggle was sent: \(stored)")

        let entries = try await store.auditLog(limit: 1000)
        let count: (String) -> Int = { line in Int(line.split(separator: "\t").last!)! }
        let refused = lines.filter { $0.hasPrefix("refused:") }.map(count).reduce(0, +)
        // A command whose one-time code was in use is audited as `failed` (never sent).
        // Identical refusals are counted on one row (`repeats`), not written again.
        let audited = entries.filter { $0.entry.phase == .refused || ($0.entry.phase == .failed && $0.entry.detail.contains("one-time code")) }
            .map { 1 + $0.repeats }.reduce(0, +)
        XCTAssertEqual(audited, refused, "every refusal is audited:\n\(lines)")
        XCTAssertEqual(lines.map(count).reduce(0, +), 100, "\(lines)")
        XCTAssertEqual(entries.filter { $0.entry.phase == .sent }.count, bolus.count + carbs.count)
        print("R7 on 2.0: \(lines.joined(separator: ", ")); sent bolus \(bolus), carbs \(carbs)")
    }
}
