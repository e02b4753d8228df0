import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import NightscoutKit
import XCTest

@testable import LookoutStore
@testable import LookoutModules

/// Simulators for remote-command tests only (their Loop profile must not disturb other tests),
/// each started once and never stopped.
actor RemoteCommandSim {
    static let shared = RemoteCommandSim(options: .init(authFailDelay: .zero))
    /// The Loop phone is late: pushes are accepted and recorded, but the app has not enacted any
    /// of them yet (`RemoteBudgetTests`).
    static let latePhone = RemoteCommandSim(options: .init(authFailDelay: .zero, loop: .init(enact: false)))
    private let options: NightscoutSimulator.Options
    private var running: (NightscoutSimulator, URL)?

    init(options: NightscoutSimulator.Options) { self.options = options }

    func start() async throws -> (NightscoutSimulator, URL) {
        if let running { return running }
        let sim = NightscoutSimulator(options: options)
        let url = try await sim.start()
        await sim.seed("profile", [[
            "startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
            "loopSettings": ["deviceToken": "0123abcd", "bundleIdentifier": "com.LOOKOUT01.loopkit.Loop"],
        ]])
        running = (sim, url)
        return (sim, url)
    }
}

/// Loop remote commands from Lua: dry run by default, live sends confirmed by the simulated Loop
/// app, and R7: an adversarial script cannot get anything beyond the configured limits to the
/// server, and every refusal is in the audit log.
final class NightscoutRemoteTests: XCTestCase {
    private var sim: NightscoutSimulator!
    private var url: URL!

    override func setUp() async throws {
        (sim, url) = try await RemoteCommandSim.shared.start()
    }

    /// Runs `source` with profile `loop` configured by `settings` (TOML lines) and a fresh store.
    private func run(_ source: String, settings: String, store: StateStore, confirmation: RemoteConfirmation? = nil,
                     file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        try await runRemoteScript(source, url: url, otpURL: sim.options.loop.otpURL, settings: settings, store: store,
                                  confirmation: confirmation, file: file, line: line)
    }

    /// Bolus and carb amounts of the pushes the server accepted since `index`.
    private func pushes(since index: Int) async -> (bolus: [Double], carbs: [Double]) {
        let all = await sim.receivedLoopNotifications().dropFirst(index).filter { $0.status == 200 && $0.push != nil }
        return (all.compactMap { $0.push?.payload["bolus-entry"]?.doubleValue },
                all.compactMap { $0.push?.payload["carbs-entry"]?.doubleValue })
    }

    func testCommandsAreDryRunsUnlessTheProfileSaysLive() async throws {
        let before = await sim.receivedLoopNotifications().count
        let store = try StateStore()
        let lines = try await run("""
            local r = assert(loop:bolus(1.5))
            print(r.state, r.command, r.detail)
            local _, err = loop:bolus(9)
            print(err.code, err.reason, err.message)
            local _, err2 = loop:closed_loop(true)
            print(err2.code)
            """, settings: "max_bolus = 2\nmax_bolus_per_hour = 4", store: store)
        XCTAssertEqual(lines, [
            "dry_run\tbolus 1.5 U\tdry run: would send bolus 1.5 U",
            "refused\texceedsMaximum\tamount 9 is above the maximum of 2 per command",
            "unsupported",
        ])
        let after = await sim.receivedLoopNotifications().count
        XCTAssertEqual(after, before, "a dry run sends nothing")
        let phases = try await store.auditEntries().map(\.phase)
        XCTAssertEqual(phases, [.dryRun, .refused])
    }

    func testLiveCommandsAreSentConfirmedAndAudited() async throws {
        let before = await sim.receivedLoopNotifications().count
        let store = try StateStore()
        let lines = try await run("""
            local r = assert(loop:bolus(1.25, { notes = "from a test" }))
            print(r.state, r.command)
            local o = assert(loop:override("Exercise", { duration = "45m", wait = false }))
            print(o.state, o.command)
            local _, err = loop:override("Party")
            print(err.code, err.reason)
            """, settings: """
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 4
            overrides = ["Exercise"]
            """, store: store)
        XCTAssertEqual(lines, [
            "confirmed\tbolus 1.25 U",
            "sent\toverride Exercise for 45 min",
            "refused\toverrideNotAllowed",
        ])
        let sent = await pushes(since: before)
        XCTAssertEqual(sent.bolus, [1.25])
        let phases = try await store.auditEntries().map(\.phase)
        XCTAssertEqual(phases, [.attempted, .sent, .confirmed, .attempted, .sent, .refused])
    }

    func testLiveCommandDeclinedAtTheTerminalIsNotSent() async throws {
        let before = await sim.receivedLoopNotifications().count
        let (confirmation, asked) = decliningConfirmation()
        let store = try StateStore()
        let lines = try await run("""
            local _, err = loop:bolus(1)
            print(err.code, err.message)
            """, settings: "remote = \"live\"\nmax_bolus = 2\nmax_bolus_per_hour = 4", store: store, confirmation: confirmation)
        XCTAssertEqual(lines, ["declined\tnot sent: declined at the terminal"])
        XCTAssertEqual(asked.withLock { $0 }, ["Send bolus 1 U to loop (\(url.absoluteString))?"])
        let after = await sim.receivedLoopNotifications().count
        XCTAssertEqual(after, before)
        let phases = try await store.auditEntries().map(\.phase)
        XCTAssertEqual(phases, [.attempted, .failed])
    }

    /// R7: many tasks try every trick at once; nothing beyond the limits reaches the server.
    func testR7AdversarialScriptCannotExceedTheLimits() async throws {
        let before = await sim.receivedLoopNotifications().count
        let store = try StateStore()
        let lines = try await run("""
            local tricks = {
              function() return loop:bolus(1, { wait = false }) end,
              function() return loop:bolus(2, { wait = false }) end,
              function() return loop:bolus(2.01, { wait = false }) end,
              function() return loop:bolus("1.5", { wait = false }) end,
              function() return loop:bolus(-1, { wait = false }) end,
              function() return loop:bolus(0/0, { wait = false }) end,
              function() return loop:bolus(math.huge, { wait = false }) end,
              function() return loop:bolus(1e-300, { wait = false }) end,
              function() return loop:bolus(0.005, { wait = false }) end,
              function() return loop:bolus(nil, { wait = false }) end,
              function() return loop:carbs(30, { wait = false }) end,
              function() return loop:carbs(31, { wait = false }) end,
              function() return loop:carbs("20", { wait = false }) end,
              function() return loop:carbs(10, { absorption = 1e9, wait = false }) end,
              function() return loop:override("Exercise ", { wait = false }) end,
              function() return loop:override("exercise", { wait = false }) end,
              function() return loop:cancel_override { wait = false } end,
            }
            """ + adversarialRoundsLua, settings: """
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 3
            max_carbs = 30
            max_carbs_per_hour = 40
            """, store: store)
        let sent = await pushes(since: before)
        XCTAssertLessThanOrEqual(sent.bolus.reduce(0, +), 3, "hourly bolus limit: \(sent.bolus)")
        XCTAssertTrue(sent.bolus.allSatisfy { $0 > 0 && $0 <= 2 }, "\(sent.bolus)")
        XCTAssertLessThanOrEqual(sent.carbs.reduce(0, +), 40, "hourly carb limit: \(sent.carbs)")
        XCTAssertTrue(sent.carbs.allSatisfy { $0 > 0 && $0 <= 30 }, "\(sent.carbs)")
        XCTAssertGreaterThan(sent.bolus.count, 0, "the limits still let something through")

        let entries = try await store.auditEntries(limit: 1000)
        let refusedInScript = lines.filter { $0.hasPrefix("refused:") }.compactMap { Int($0.split(separator: "\t").last!) }.reduce(0, +)
        // A command whose one-time code was in use is audited as `failed` (never sent).
        let audited = entries.filter { $0.phase == .refused || ($0.phase == .failed && $0.detail.contains("one-time code")) }.count
        XCTAssertEqual(audited, refusedInScript, "every refusal is audited:\n\(lines)")
        XCTAssertEqual(refusedInScript + lines.filter { !$0.hasPrefix("refused:") }
            .compactMap { Int($0.split(separator: "\t").last!) }.reduce(0, +), 85, "\(lines)")
        XCTAssertEqual(entries.filter { $0.phase == .sent }.count, sent.bolus.count + sent.carbs.count)
        print("R7: \(lines.joined(separator: ", ")); sent bolus \(sent.bolus), carbs \(sent.carbs)")
    }
}
