import Foundation
import GarminKit
import LookoutSim
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules

/// One Garmin simulator for the whole test process (never stopped).
actor GarminModuleSim {
    static let shared = GarminModuleSim()
    private var running: (GarminSimulator, URL)?
    func get() async throws -> (GarminSimulator, URL) {
        if let running { return running }
        let sim = GarminSimulator()
        let r = (sim, try await sim.start())
        running = r
        return r
    }
}

/// The `garmin` Lua module against the simulator: login with an MFA handler written in Lua, every
/// data method, `get`, status, and each error kind.
final class GarminModuleTests: XCTestCase {
    private var sim: GarminSimulator!
    private var base: URL!
    private var home: URL!

    override func setUp() async throws {
        (sim, base) = try await GarminModuleSim.shared.get()
        home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-garmin-\(UUID())")
    }
    override func tearDown() { try? FileManager.default.removeItem(at: home) }

    /// Runs `source` with `garmin`; profiles `me` (MFA account), `plain` (no MFA), `down`
    /// (unreachable), `nopass` (no password configured).
    private func run(_ source: String, file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let config = try HostConfig(text: """
            [garmin.me]
            url = "\(base.absoluteString)"
            garth_home = "\(home.appendingPathComponent("me").path)"
            email = "\(GarminSimulator.Options.mfaEmail)"
            password_env = "GARMIN_PW"
            [garmin.plain]
            url = "\(base.absoluteString)"
            garth_home = "\(home.appendingPathComponent("plain").path)"
            email = "\(GarminSimulator.Options.defaultEmail)"
            password_env = "GARMIN_PW"
            [garmin.down]
            url = "http://127.0.0.1:1"
            timeout = "1s"
            garth_home = "\(home.appendingPathComponent("plain").path)"
            [garmin.nopass]
            url = "\(base.absoluteString)"
            garth_home = "\(home.appendingPathComponent("nopass").path)"
            email = "\(GarminSimulator.Options.defaultEmail)"
            """)
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let (transcript, outcome) = try await runLua(
            "local garmin = require 'garmin'\n" + source,
            modules: [GarminModule(config: config, paths: paths, environment: ["GARMIN_PW": GarminSimulator.Options.defaultPassword])])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    func testLoginWithLuaMFAHandlerThenDataMethods() async throws {
        let lines = try await run("""
            local me = assert(garmin.client "me")
            local st = assert(me:status())
            print("before", st.logged_in)
            local _, err = me:heart_rate()
            print(err.code, err.kind, err.service)
            local asked = 0
            assert(me:login { mfa = function() asked = asked + 1; return "123456" end })
            st = assert(me:status())
            print("after", st.logged_in, st.mfa, st.domain, type(st.expires_at), asked)
            local day = os.date("!%Y-%m-%d", os.time() - 86400)
            local hr = assert(me:heart_rate(day))
            print("hr", #hr.heartRateValues, type(hr.restingHeartRate))
            print("sleep", assert(me:sleep(day)).dailySleepDTO.sleepTimeSeconds > 0)
            local steps = assert(me:steps(os.date("!%Y-%m-%d", os.time() - 6 * 86400), day))
            print("steps", #steps, steps[#steps].calendarDate == day)
            print("summary", assert(me:daily_summary(day)).totalSteps > 0)
            print("stress", #assert(me:stress(day)).stressValuesArray)
            print("battery", assert(me:body_battery(day))[1].event.eventType)
            print("hrv", type(assert(me:hrv(day)).hrvSummary.lastNightAvg))
            print("weight", type(assert(me:weight(day)).dateWeightList))
            local acts = assert(me:activities { limit = 3, start = 1 })
            print("acts", #acts, type(acts[1].activityId))
            print("profile", assert(me:profile()).userName)
            local got = assert(me:get("/usersummary-service/stats/steps/daily/" .. day .. "/" .. day))
            print("get", #got, got[1].calendarDate == day)
            -- No data is an empty table and no error (never a bare nil).
            local function nodata(v, err) return type(v) == "table" and next(v) == nil and err == nil end
            print("future", nodata(me:hrv "2999-01-01"), nodata(me:sleep "2999-01-01"), nodata(me:stress "2999-01-01"))
            print("refresh", math.type(assert(me:refresh())))
            """)
        XCTAssertEqual(lines, [
            "before\tfalse", "auth\tauth\tgarmin", "after\ttrue\ttrue\tgarmin.com\tnumber\t1", "hr\t720\tnumber", "sleep\ttrue",
            "steps\t6\ttrue", "summary\ttrue", "stress\t480", "battery\tSLEEP", "hrv\tnumber", "weight\ttable", "acts\t3\tnumber",
            "profile\tmfa", "get\t1\ttrue", "future\ttrue\ttrue\ttrue", "refresh\tinteger",
        ])
        // The tokens are in garth's format in the profile's directory.
        let tokens = try GarminTokenStore.load(from: home.appendingPathComponent("me"))
        XCTAssertNotNil(tokens.oauth1?.mfaToken)
    }

    func testErrorKinds() async throws {
        await sim.injectFault(status: 429, pathPrefix: "/userprofile-service/socialProfile", count: 1, retryAfter: 30)
        var lines = try await run("""
            local me = assert(garmin.client "me")
            local ok, err = me:login()
            print("mfa", ok, err.code, err.kind)
            ok, err = me:login { mfa = function() return nil end }
            print("mfa-nil", ok, err.code)
            ok, err = me:login { mfa = function() return 111 end }
            print("mfa-wrong", ok, err.code, err.message)
            local plain = assert(garmin.client "plain")
            assert(plain:login())
            local _, e = plain:profile()
            print("429", e.code, e.retry_after, e.status, e.retryable)
            _, e = plain:get("/no/such/path", { a = 1, b = { "x", "y" }, c = true })
            print("404", e.code, e.status)
            local down = assert(garmin.client "down")
            _, e = down:profile()
            print("net", e.code)
            local nopass = assert(garmin.client "nopass")
            _, e = nopass:login()
            print("nopass", e.code)
            local none, e2 = garmin.client "nope"
            print("profile", none, e2.code)
            print(pcall(plain.heart_rate, plain, "20-11-2026"))
            print(pcall(plain.activities, plain, { limit = "ten" }))
            print(pcall(plain.get, plain, "no-slash"))
            print(pcall(plain.steps, plain, "2026-01-01", "2026-03-01"))
            print(pcall(plain.login, plain, { mfa = 5 }))
            print(tostring(plain):match("^garmin client plain") ~= nil)
            """)
        XCTAssertEqual(lines.count, 14, "\(lines)")
        XCTAssertEqual(lines[0], "mfa\tnil\tmfa_required\tmfa_required")
        XCTAssertEqual(lines[1], "mfa-nil\tnil\tmfa_required")
        XCTAssertEqual(lines[2], "mfa-wrong\tnil\tauth\tthe MFA code was rejected")
        lines.removeFirst(2)
        XCTAssertEqual(lines[1], "429\trate_limited\t30.0\t429\ttrue")
        XCTAssertEqual(lines[2], "404\thttp\t404")
        XCTAssertEqual(lines[3], "net\tnetwork")
        XCTAssertEqual(lines[4], "nopass\tconfig")
        XCTAssertEqual(lines[5], "profile\tnil\tconfig")
        XCTAssertTrue(lines[6].hasPrefix("false\t") && lines[6].contains("expected a date \"YYYY-MM-DD\""), lines[6])
        XCTAssertTrue(lines[7].contains("opts.limit"), lines[7])
        XCTAssertTrue(lines[8].contains("path must start with '/'"), lines[8])
        XCTAssertTrue(lines[9].contains("at most 28 days per call"), lines[9])
        XCTAssertTrue(lines[10].contains("opts.mfa: expected a function"), lines[10])
        XCTAssertEqual(lines[11], "true")
    }

    func testTokensFromGarminKitAreUsedAndSharedRefreshIsKept() async throws {
        let dir = home.appendingPathComponent("kit")
        let kit = try GarminClient(configuration: .local(base, tokenDirectory: dir))
        _ = try await kit.login(email: GarminSimulator.Options.defaultEmail, password: GarminSimulator.Options.defaultPassword)
        let config = try HostConfig(text: "[garmin.kit]\nurl = \"\(base.absoluteString)\"\ngarth_home = \"\(dir.path)\"\n")
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let before = await sim.counters()
        let (transcript, _) = try await runLua(
            """
            local garmin = require 'garmin'
            local me = assert(garmin.client "kit")
            local done, handles = 0, {}
            for i = 1, 10 do handles[i] = task.spawn(function() assert(me:profile()); done = done + 1 end) end
            for _, h in ipairs(handles) do task.wait(h) end
            print(done)
            """, modules: [GarminModule(config: config, paths: paths, environment: [:])])
        let after = await sim.counters()
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(transcript.lines, ["10"])
        XCTAssertEqual(after.exchanges - before.exchanges, 0, "a valid saved token needs no exchange")
    }
}
