import Foundation
import LookoutSim
import LookoutWire
import LookoutTestSupport
import Lua
import NightscoutKit
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutModules

/// Issue 24 §4: one budget per insulin pump, however the site is spelled, and one one-time code
/// per command. End to end: Lua scripts through the `nightscout` module against simulators
/// whose Loop app checks every code.
final class RemoteBudgetSpellingTests: XCTestCase {
    /// The Loop device both simulators' profiles name.
    private static let loopSettings: JSONValue = ["deviceToken": "feedface0123", "bundleIdentifier": "com.LOOKOUT24.loopkit.Loop"]

    /// A simulator with a Loop profile naming `loopSettings`, its Loop app enacting.
    private func startSim() async throws -> (NightscoutSimulator, URL) {
        let sim = NightscoutSimulator(options: .init(apiSecret: "this is my long pass phrase", authFailDelay: .zero))
        let url = try await sim.start()
        await sim.seed("profile", [[
            "startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
            "loopSettings": Self.loopSettings,
        ]])
        return (sim, url)
    }

    /// `[nightscout.NAME]` for each (name, url), live, 2 U per command, 4 U/h.
    private func config(_ profiles: [(String, String)], extra: String = "") throws -> HostConfig {
        try HostConfig(text: profiles.map { name, url in
            """
            [nightscout.\(name)]
            url = "\(url)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 4
            \(extra)
            """
        }.joined(separator: "\n\n"))
    }

    private func run(_ source: String, config: HostConfig, store: StateStore, otpURL: String) async throws -> [String] {
        let environment = ["NS_SECRET": "this is my long pass phrase", "LOOP_OTP": otpURL]
        let (transcript, outcome) = try await runLua("local nightscout = require 'nightscout'\n" + source,
                                                     modules: [NightscoutModule(config: config, store: store, environment: environment)])
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        return transcript.lines
    }

    /// Boluses the simulator's Loop app enacted.
    private func enacted(_ sim: NightscoutSimulator) async -> [String] {
        await sim.loopAppEvents().filter { $0.outcome == .enacted }.map(\.action)
    }

    /// Every spelling of the issue against one simulator, and a second simulator whose profile
    /// names the same Loop device: one 4 U/h budget for all of them. Each profile asks for 2 U;
    /// exactly two are sent (the second after the next one-time code), the rest are refused, and
    /// Loop enacts 4 U in all.
    func testEverySpellingOfOneSiteAndEverySiteOfOneDeviceShareOneBudget() async throws {
        let (sim, url) = try await startSim()
        let (other, otherURL) = try await startSim()
        defer { Task { await sim.stop(); await other.stop() } }
        let port = try XCTUnwrap(url.port)
        let spellings: [(String, String)] = [
            ("same_device", otherURL.absoluteString),
            ("plain", "http://127.0.0.1:\(port)"),
            ("localhost", "http://localhost:\(port)"),
            ("dot", "http://127.0.0.1:\(port)/."),
            ("escaped_dot", "http://127.0.0.1:\(port)/%2e"),
            ("trailing_dot", "http://127.0.0.1.:\(port)"),
            ("short", "http://127.1:\(port)"),
            ("mapped", "http://[::ffff:127.0.0.1]:\(port)"),
        ]
        let store = try StateStore()
        let lines = try await run("""
            for _, name in ipairs { \(spellings.map { "\"\($0.0)\"" }.joined(separator: ", ")) } do
              local site = assert(nightscout.client(name))
              local r, err = site:bolus(2, { wait = "40s" })
              print(name, r and r.state or err.reason or err.code)
            end
            """, config: try config(spellings), store: store, otpURL: sim.options.loop.otpURL)
        XCTAssertEqual(lines, [
            "same_device\tconfirmed", "plain\tconfirmed", "localhost\texceedsHourlyTotal", "dot\texceedsHourlyTotal",
            "escaped_dot\texceedsHourlyTotal", "trailing_dot\texceedsHourlyTotal", "short\texceedsHourlyTotal",
            "mapped\texceedsHourlyTotal",
        ])
        let enactedHere = await enacted(sim), enactedThere = await enacted(other)
        XCTAssertEqual(enactedThere.count, 1, "\(enactedThere)")
        XCTAssertEqual(enactedHere.count, 1, "4 U in all: \(enactedHere)")
        // Identical refusals are counted on one row (audit_repeats) instead of written again.
        let refused = try await store.auditLog(limit: 100).filter { $0.entry.phase == .refused }
        XCTAssertEqual(refused.reduce(0) { $0 + 1 + $1.repeats }, 6, "every refusal is audited")
    }

    /// Two commands within one 30 s period: the second never carries the first's code. With a
    /// wait it is sent with the next period's code (Loop enacts both); without one it is
    /// refused before sending (`otp_in_use`), and nothing reaches the server for it.
    func testOneCodePerCommand() async throws {
        let (sim, url) = try await startSim()
        defer { Task { await sim.stop() } }
        let store = try StateStore()
        let profiles = [("one", url.absoluteString), ("two", "http://localhost:\(try XCTUnwrap(url.port))")]
        let lines = try await run("""
            local one, two = assert(nightscout.client "one"), assert(nightscout.client "two")
            local function show(label, r, err) print(label, r and r.state or err.code) end
            show("first", one:bolus(0.5, { wait = "40s" }))
            show("second", two:carbs(10, { wait = "40s" }))
            show("third", one:bolus(0.6, { wait = false }))
            """, config: try config(profiles, extra: "max_carbs = 20\nmax_carbs_per_hour = 40"), store: store,
            otpURL: sim.options.loop.otpURL)
        XCTAssertEqual(lines, ["first\tconfirmed", "second\tconfirmed", "third\totp_in_use"])
        let events = await sim.loopAppEvents()
        XCTAssertEqual(events.map(\.outcome), [.enacted, .enacted], "Loop never saw a code twice: \(events)")
        let codes = await sim.receivedLoopNotifications().compactMap { $0.body["otp"]?.stringValue }
        XCTAssertEqual(codes.count, 2, "the third was not sent")
        XCTAssertEqual(Set(codes).count, 2, "two commands, two codes")
        let failed = try await store.auditEntries(limit: 100).filter { $0.phase == .failed }
        XCTAssertEqual(failed.map(\.detail).first?.contains("one-time code was already used"), true)
    }

    /// `lookout doctor`'s finding: the profiles naming one site, however spelled.
    func testProfilesNamingOneSiteAreGrouped() throws {
        let config = try config([
            ("a", "http://127.0.0.1:1337"), ("b", "http://localhost:1337/"), ("c", "http://127.1:1337/%2e"),
            ("d", "http://127.0.0.1:1338"),
        ])
        let groups = NightscoutSharedSites.groups(config)
        XCTAssertEqual(groups.map(\.profiles), [["a", "b", "c"]])
        XCTAssertEqual(groups.first?.site, "http://127.0.0.1:1337")
    }
}
