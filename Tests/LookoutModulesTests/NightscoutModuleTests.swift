import Foundation
import LookoutSim
import LookoutTestSupport
import NightscoutKit
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutStore
import LookoutWire


/// The `nightscout` Lua module against the simulator: v3 with a token, v1 with the API secret,
/// writes, history, `latest`, profiles, and every kind of failure a script must see.
final class NightscoutModuleTests: XCTestCase {
    private var site: NightscoutModuleSim.Running!

    override func setUp() async throws {
        site = try await NightscoutModuleSim.shared.start()
    }

    /// Runs `source` with the `nightscout` module configured with profiles `home` (admin token),
    /// `reader` (read-only token), `legacy` (API secret) and `wrong` (a bad token).
    private func run(_ source: String, store: StateStore? = nil, file: StaticString = #filePath, line: UInt = #line) async throws
        -> [String]
    {
        let config = try HostConfig(text: """
            [nightscout.home]
            url = "\(site.url.absoluteString)"
            token_env = "NS_TOKEN"
            [nightscout.reader]
            url = "\(site.url.absoluteString)"
            token_env = "NS_READER"
            [nightscout.legacy]
            url = "\(site.url.absoluteString)"
            secret_env = "NS_SECRET"
            [nightscout.wrong]
            url = "\(site.url.absoluteString)"
            token_env = "NS_WRONG"
            """)
        let environment = ["NS_TOKEN": site.adminToken, "NS_READER": site.readerToken, "NS_SECRET": NightscoutModuleSim.secret,
                           "NS_WRONG": "lua-admin-0000000000000000", "NS_URL": site.url.absoluteString]
        let store = try store ?? StateStore()
        let (transcript, outcome) = try await runLua(
            "local nightscout = require 'nightscout'\nlocal outbox = require 'outbox'\n" + source,
            modules: [NightscoutModule(config: config, store: store, environment: environment, retryPolicy: RetryPolicy(initialDelay: 3600)),
                      OutboxModule(store: store)])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    func testTokenClientUsesV3AndDocumentsCarryBothTimeForms() async throws {
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            print(home:api(), tostring(home):match("^nightscout client home"))
            local t0 = 1714557600000  -- 2024-05-01T10:00:00Z
            for i = 0, 3 do
              assert(home:upload_bg { sgv = 100 + i * 10, date = t0 + i * 300000, slope = 2.5, device = "lua-v3" })
            end
            local got = assert(home:entries { from = t0, to = "2024-05-01T10:15:00Z", find = { device = "lua-v3" } })
            print(#got, got[1].sgv, got[1].direction, got[1].date, got[1].dateString, got[1].type, got[1].app)
            print(got[4].sgv, got[4].identifier ~= nil, getmetatable(got) == json.array_mt)
            local high = assert(home:search("entries", { find = { device = "lua-v3", sgv = { gte = 120 } }, sort = "date" }))
            print(#high, high[1].sgv, high[2].sgv)
            local only = assert(home:entries { find = { device = "lua-v3" }, from = t0, count = 2, fields = { "sgv" } })
            print(#only, only[1].sgv, only[1].direction)
            assert(home:upload_treatment { eventType = "Correction Bolus", insulin = 1.5, date = t0, device = "lua-v3" })
            local tr = assert(home:treatments { from = t0, to = t0, find = { device = "lua-v3" } })
            print(#tr, tr[1].eventType, tr[1].insulin, tr[1].created_at, tr[1].date, tr[1].enteredBy)
            local none = assert(home:entries { find = { device = "nobody" }, last = "1h" })
            print(#none, json.encode(none))
            """)
        XCTAssertEqual(lines, [
            "v3\tnightscout client home",
            "4\t130\tSingleUp\t1714558500000\t2024-05-01T10:15:00.000Z\tsgv\tlookout",
            "100\ttrue\ttrue",
            "2\t120\t130",
            "2\t130\tnil",
            "1\tCorrection Bolus\t1.5\t2024-05-01T10:00:00.000Z\t1714557600000\tlookout",
            "0\t[]",
        ])
    }

    func testSecretClientFallsBackToV1AndSeesTheSameData() async throws {
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local legacy = assert(nightscout.client "legacy")
            print(legacy:api())
            local t0 = 1714644000000  -- 2024-05-02T10:00:00Z
            assert(home:upload_bg { sgv = 90, date = t0, direction = "Flat", device = "lua-v1" })
            local created = assert(legacy:upload_bg { sgv = 95, date = t0 + 300000, direction = "FortyFiveUp", device = "lua-v1" })
            print(created.state, type(created.id))
            local got = assert(legacy:entries { from = t0, to = t0 + 300000, find = { device = "lua-v1" } })
            print(#got, got[1].sgv, got[1].direction, got[2].sgv, got[2].dateString)
            local seen = assert(home:entries { from = t0, to = t0 + 300000, find = { device = "lua-v1" } })
            print(#seen)
            local ok, err = legacy:read("entries", "x")
            print(ok, err.code, err.service)
            local ok2, err2 = legacy:search("entries", { sort = "sgv" })
            print(ok2, err2.code, err2.message)
            local big = assert(legacy:entries { find = { device = "lua-v1", sgv = { gte = 93 } }, from = t0 })
            print(#big, big[1].sgv)
            """)
        XCTAssertEqual(lines, [
            "v1",
            "sent\tstring",
            "2\t95\tFortyFiveUp\t90\t2024-05-02T10:00:00.000Z",
            "2",
            "nil\tunsupported\tnightscout",
            "nil\tunsupported\tsorting needs API v3 (an access token)",
            "1\t95",
        ])
    }

    func testCreateDeduplicatesAndUpdatePatchDeleteShowInHistory() async throws {
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local start = home:last_modified().srvDate
            local doc = { eventType = "Note", notes = "first", date = 1714730400000, device = "lua-crud" }
            local a = assert(home:create("treatments", doc))
            local b = assert(home:create("treatments", doc))
            print(a.state, b.state, a.deduplicated, a.id == b.id, b.attempts, math.type(b.sent_at))
            -- The same identifier with other content: not sent again, and said so.
            local c = assert(home:create("treatments", { eventType = "Note", notes = "second", date = 1714730400000, device = "lua-crud" }))
            print(c.id == a.id, c.deduplicated, assert(home:read("treatments", a.id)).notes)
            assert(home:patch("treatments", a.id, { notes = "patched" }))
            print(assert(home:read("treatments", a.id)).notes)
            local u = assert(home:update("treatments", a.id, { eventType = "Note", notes = "replaced",
                                                                        date = 1714730400000, device = "lua-crud" }))
            print(u.created, assert(home:read("treatments", a.id)).notes)
            assert(home:delete("treatments", a.id))
            local gone, err = home:read("treatments", a.id)
            print(gone, err.code, err.status)
            local seen = {}
            for d in home:history("treatments", start) do
              if d.identifier == a.id then seen[#seen + 1] = tostring(d.isValid) .. ":" .. d.notes end
            end
            print(table.concat(seen, ","))
            local missing, err2 = home:read("treatments", "no-such-id")
            print(missing, err2.status)
            """)
        XCTAssertEqual(lines, [
            "sent\tsent\tfalse\ttrue\t1\tinteger",
            "true\ttrue\tfirst",
            "patched",
            "false\treplaced",
            "nil\thttp\t410",
            "false:replaced",
            "nil\t404",
        ])
    }

    func testHistoryPagesNeitherLoseNorRepeatDocuments() async throws {
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local start = home:last_modified().srvDate
            for i = 1, 7 do
              assert(home:create("devicestatus", { device = "lua-history", date = 1714816800000 + i, uploaderBattery = i }))
            end
            local seen, last = {}, 0
            for d in home:history("devicestatus", start, { page = 2 }) do
              if d.device == "lua-history" then seen[#seen + 1] = d.uploaderBattery end
              assert(d.srvModified >= last, "history is in srvModified order")
              last = d.srvModified
              assert(d.created_at and d.date)
            end
            print(table.concat(seen, " "))
            """)
        XCTAssertEqual(lines, ["1 2 3 4 5 6 7"])
    }

    /// API v3 refuses a document without a date (400); `create` dates it now, as
    /// `upload_treatment` does, so the same call works over v3 and v1.
    func testCreateWithoutADateWorksOverV3AndV1() async throws {
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local legacy = assert(nightscout.client "legacy")
            local item = assert(home:create("devicestatus", { device = "lua-nodate", uploaderBattery = 55 }))
            print(home:api(), item.state)
            local got = assert(home:devicestatus { find = { device = "lua-nodate" }, last = "1h" })
            print(#got, got[1].uploaderBattery, math.type(got[1].date), type(got[1].created_at))
            print(math.abs(got[1].date - os.time() * 1000) < 600000)
            local v1 = assert(legacy:create("devicestatus", { device = "lua-nodate-v1" }))
            print(legacy:api(), v1.state)
            """)
        XCTAssertEqual(lines, ["v3\tsent", "1\t55\tinteger\tstring", "true", "v1\tsent"])
    }

    /// `history(since)` gives documents changed after `since`, as its stub says: resuming from
    /// the largest `srvModified` seen repeats nothing.
    func testHistoryResumedFromTheLargestSrvModifiedRepeatsNothing() async throws {
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local start = home:last_modified().srvDate
            for i = 1, 3 do
              assert(home:create("treatments", { eventType = "Note", notes = "resume " .. i, date = 1714816800000 + i, device = "lua-resume" }))
            end
            local mark, n = start, 0
            for d in home:history("treatments", start) do
              if d.device == "lua-resume" then n = n + 1 end
              mark = math.max(mark, d.srvModified)
            end
            local again = 0
            for d in home:history("treatments", mark) do if d.device == "lua-resume" then again = again + 1 end end
            print(n, again)
            """)
        XCTAssertEqual(lines, ["3\t0"])
    }

    func testLatestReadingAndProfileSchedules() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local now = \(now)
            assert(home:upload_bg { sgv = 150, date = now - 360000, direction = "Flat", device = "lua-latest" })
            assert(home:upload_bg { sgv = 138, date = now - 60000, direction = "FortyFiveDown", device = "lua-latest" })
            local bg = assert(home:latest())
            print(bg.sgv, bg.mmol, bg.direction, bg.delta, bg.device, bg.date == now - 60000, bg.entry.sgv)
            print(bg.age >= 59 and bg.age < 120)
            assert(home:create("profile", {
              defaultProfile = "Default", startDate = "2024-01-01T00:00:00.000Z", date = now,
              store = {
                Default = { timezone = "Europe/Berlin", units = "mg/dl",
                  basal = { { time = "00:00", value = 0.8 }, { time = "06:00", value = 1.2 } },
                  sens = { { time = "00:00", value = 40 } }, carbratio = { { time = "00:00", value = 10 } },
                  target_low = { { time = "00:00", value = 90 } }, target_high = { { time = "00:00", value = 120 } } },
                Sport = { basal = { { time = "00:00", value = 0.5 } } },
              },
            }))
            local p = assert(home:profile())
            -- 05:30 UTC is 07:30 in Berlin (summer time): the 06:00 rate applies there.
            print(p.defaultProfile, p:basal("2024-07-01T05:30:00Z"), p:basal("2024-07-01T03:30:00Z"), p:value("basal", "2024-07-01T05:30:00Z", "Sport"))
            print(p:sens(), p:carbratio(), p:targets())
            print(pcall(p.basal, p, nil, "Nope"))
            -- A defaultProfile naming no profile, or none at all: the first profile by name.
            p.defaultProfile = "Missing"; local missing = p:basal("2024-07-01T05:30:00Z")
            p.defaultProfile = nil; print(missing, p:basal("2024-07-01T05:30:00Z"), p:sens())
            print(nightscout.direction(2.5), nightscout.direction(-0.2), nightscout.direction(0/0))
            print(nightscout.to_mgdl(5.5) // 1, math.floor(nightscout.to_mmol(180) * 10 + 0.5) / 10)
            """)
        XCTAssertEqual(lines, [
            "138\t7.7\tFortyFiveDown\t-12.0\tlua-latest\ttrue\t138",
            "true",
            "Default\t1.2\t0.8\t0.5",
            "40.0\t10.0\t90.0\t120.0",
            "false\tprofile: no profile named 'Nope' (the document has: Default, Sport)",
            "1.2\t1.2\t40.0",
            "SingleUp\tFlat\tNOT COMPUTABLE",
            "99.0\t10.0",
        ])
    }

    /// `last` bounds the read instead of the default count: 15 readings between 1 h and 2 h 10 min
    /// ago all come back from `last = "3h"` (not the 10 of the default count).
    func testLastReturnsTheWholeRangeNotTheDefaultCount() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local legacy = assert(nightscout.client "legacy")
            for i = 0, 14 do
              assert(home:upload_bg { sgv = 100 + i, date = \(now) - 3600000 - i * 300000, device = "lua-last" })
            end
            print(#assert(home:entries { last = "3h", type = "sgv", find = { device = "lua-last" } }))
            print(#assert(legacy:entries { last = "3h", type = "sgv", find = { device = "lua-last" } }))
            print(#assert(home:entries { last = "3h", count = 4, find = { device = "lua-last" } }))
            print(#assert(home:entries { find = { device = "lua-last" } }))
            """)
        XCTAssertEqual(lines, ["15", "15", "4", "10"])
    }

    /// A site without a profile answers `nil, err` (`no_data`), so `assert(home:profile())` says why.
    func testProfileOfASiteWithoutOneIsNilErr() async throws {
        let empty = try await Self.emptySite()
        let lines = try await run("""
            local bare = assert(nightscout.connect { url = "\(empty.absoluteString)" })
            local p, err = bare:profile()
            print(p, err.code, err.service, err.retryable, err.message)
            print(tostring(select(2, pcall(function() return assert(bare:profile()) end))))
            """)
        XCTAssertEqual(lines, [
            "nil\tno_data\tnightscout\tfalse\tthe site has no profile (create one in Nightscout's profile editor)",
            "nightscout: the site has no profile (create one in Nightscout's profile editor)",
        ])
    }

    /// A wrong API secret: reads are refused too (Nightscout gives a credential that does not
    /// resolve no permissions, not the default roles), and an upload is refused with 401 and
    /// answers `nil, err`, not "pending", although the site delays that answer as Nightscout does
    /// (6 s here, after the read's failed login: longer than the old 5 s window).
    func testUploadWithAWrongSecretIsRefusedNotPending() async throws {
        let slow = try await Self.slowAuthSite()
        let lines = try await run("""
            local bad = assert(nightscout.connect { url = "\(slow.absoluteString)", secret = "not the site's secret at all" })
            local none, rerr = bad:entries { count = 1 }
            print(none, rerr.code, rerr.status)
            local r, err = bad:upload_treatment { eventType = "Note", notes = "refused", date = 1715076000000, device = "lua-wrong-secret" }
            print(r, err and err.code, err and err.status, err and err.retryable, err and type(err.outbox_id))
            """)
        XCTAssertEqual(lines, ["nil\tauth\t401", "nil\tauth\t401\tfalse\tstring"])
    }

    /// README's Nightscout example, exactly as printed, against a site of its own with two
    /// readings and a profile.
    func testReadmeNightscoutExampleRunsAsPrinted() async throws {
        let example = try XCTUnwrap(ReadmeExamples.luaBlock(after: "### Nightscout"))
        let (url, sim) = try await Self.site("readme", .init(apiSecret: NightscoutModuleSim.secret, authFailDelay: .zero))
        let token = await sim.addSubject(name: "readme", roles: ["admin"])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func iso(_ ms: Int64) -> String {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
        }
        await sim.seed("entries", [
            ["type": "sgv", "sgv": 120, "date": .int(now - 600_000), "dateString": .string(iso(now - 600_000)), "device": "readme"],
            ["type": "sgv", "sgv": 118, "date": .int(now - 300_000), "dateString": .string(iso(now - 300_000)), "device": "readme"],
        ])
        await sim.seed("profile", [[
            "defaultProfile": "Default", "startDate": "2024-01-01T00:00:00.000Z", "date": .int(now), "created_at": .string(iso(now)),
            "store": ["Default": ["units": "mg/dl", "basal": [["time": "00:00", "value": 0.7]], "sens": [["time": "00:00", "value": 45]],
                                  "carbratio": [["time": "00:00", "value": 10]], "target_low": [["time": "00:00", "value": 100]],
                                  "target_high": [["time": "00:00", "value": 110]]]],
        ]])
        let config = try HostConfig(text: "[nightscout.home]\nurl = \"\(url.absoluteString)\"\ntoken_env = \"NS_TOKEN\"\n")
        let (transcript, outcome) = try await runLua(example, modules: [
            NightscoutModule(config: config, store: try StateStore(), environment: ["NS_TOKEN": token], retryPolicy: RetryPolicy(initialDelay: 3600)),
        ])
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        let lines = transcript.lines
        XCTAssertEqual(Array(lines.prefix(3)), ["\(iso(now - 300_000))\t118", "\(iso(now - 600_000))\t120", "0.7\t45.0\t100.0\t110.0"])
        XCTAssertEqual(lines.count, 4, "\(lines)")
        XCTAssertTrue(lines.last?.hasPrefix("Carb Correction\t") ?? false, "\(lines)")
    }

    /// Simulators of their own, started once for the process (never stopped, as `NightscoutModuleSim`).
    private actor Sites {
        static let shared = Sites()
        private var started: [String: (URL, NightscoutSimulator)] = [:]
        func start(_ name: String, _ options: NightscoutSimulator.Options) async throws -> (URL, NightscoutSimulator) {
            if let site = started[name] { return site }
            let sim = NightscoutSimulator(options: options)
            let url = try await sim.start()
            started[name] = (url, sim)
            return (url, sim)
        }
    }
    private static func site(_ name: String, _ options: NightscoutSimulator.Options) async throws -> (URL, NightscoutSimulator) {
        try await Sites.shared.start(name, options)
    }
    /// No profile, readable without credentials.
    private static func emptySite() async throws -> URL {
        try await site("empty", .init(apiSecret: NightscoutModuleSim.secret, authFailDelay: .zero)).0
    }
    /// Readable without credentials; each failed login delays the next answer by 6 s more.
    private static func slowAuthSite() async throws -> URL {
        try await site("slow-auth", .init(apiSecret: NightscoutModuleSim.secret, authFailDelay: .seconds(6))).0
    }

    func testFailuresAreErrorsScriptsCanRead() async throws {
        await site.sim.inject(.status(500), count: 1, pathPrefix: "/api/v3/entries")
        await site.sim.inject(.tooManyRequests(retryAfterSeconds: 7), count: 1, pathPrefix: "/api/v3/treatments")
        await site.sim.inject(.status(502), count: 1, pathPrefix: "/api/v3/food/history")
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local _, e1 = home:entries { last = "1h" }
            print(e1.code, e1.status, e1.retryable, e1.service)
            local _, e2 = home:treatments { last = "1h" }
            print(e2.code, e2.status, e2.retryable, e2.retry_after)
            local ok, e3 = pcall(function() for _ in home:history("food") do end end)
            print(ok, e3.status, tostring(e3))
            local wrong = assert(nightscout.client "wrong")
            local _, e4 = wrong:entries()
            print(e4.code, e4.status, e4.retryable)
            local reader = assert(nightscout.client "reader")
            local _, e5 = reader:upload_treatment { eventType = "Note", notes = "no" }
            print(e5.code, e5.status, type(e5.outbox_id))
            local none, e6 = nightscout.client "elsewhere"
            print(none, e6.code, e6.message)
            local refused = assert(nightscout.connect { url = "http://127.0.0.1:1", secret = "this is my long pass phrase", timeout = "2s" })
            local _, e8 = refused:entries()
            print(e8.code, e8.retryable, (tostring(e8):find("pass phrase")))
            for _, bad in ipairs {
              function() home:entries { count = 0 } end,
              function() home:entries { from = os.time() } end,
              function() home:entries { last = "3h", from = 1714557600000 } end,
              function() home:entries { from = 1e300 } end,
              function() home:search("pets") end,
              function() home:entries { find = { sgv = { near = 1 } } } end,
              function() home:entries { cnt = 3 } end,
              function() home:entries { device = "xDrip" } end,
              function() home:entries { find = "sgv" } end,
              function() home:upload_bg { sgv = 100 } end,
              function() home:upload_bg { sgv = 5000, date = 1714557600000 } end,
              function() home:upload_treatment { insulin = 1 } end,
              function() home:upload_treatment { eventType = "Correction Bolus", insulin = -1 } end,
              function() nightscout.connect { url = "ftp://x" } end,
              function() nightscout.connect { url = "http://x", colour = "red" } end,
              function() nightscout.connect { url = "http://x", token = 5 } end,
              function() nightscout.connect { url = "http://x", token_env = "UNSET_VAR" } end,
              function() nightscout.connect { url = "http://x", secret_env = "NS_SECRET" } end,
              function() nightscout.connect { url = "http://x", jwt_file = "/etc/hostname" } end,
              function() home.entries() end,
            } do
              print((select(2, pcall(bad)):gsub("^test.lua:%d+: ", "")))
            end
            """)
        XCTAssertEqual(lines, [
            "http\t500\ttrue\tnightscout",
            "http\t429\ttrue\t7.0",
            "false\t502\tnightscout: HTTP 502: {\"status\":502}",
            "auth\t401\tfalse",
            "auth\t403\tstring",
            "nil\tconfig\tno [nightscout.elsewhere] profile in config.toml (profiles: home, legacy, reader, wrong)",
            "network\ttrue\tnil",
            "bad argument #1 to 'nightscout.client:entries' (opts.count: expected an integer from 1 to 100000)",
            "bad argument #1 to 'nightscout.client:entries' (opts.from: expected epoch milliseconds, got \(Int(Date().timeIntervalSince1970)), which looks like seconds (multiply os.time() by 1000))",
            "bad argument #1 to 'nightscout.client:entries' (opts.last and opts.from cannot both be given)",
            "bad argument #1 to 'nightscout.client:entries' (opts.from: expected epoch milliseconds, got 1e+300, which is not a date)",
            "bad argument #1 to 'nightscout.client:search' (unknown collection 'pets' (known: devicestatus, entries, food, profile, settings, treatments))",
            "bad argument #1 to 'nightscout.client:entries' (opts.find.sgv.near: unknown operator (known: eq, ne, gt, gte, lt, lte, in, nin, re))",
            "bad argument #1 to 'nightscout.client:entries' (unknown option 'cnt' (did you mean 'count'?))",
            "bad argument #1 to 'nightscout.client:entries' (unknown option 'device' (known: count, fields, find, from, last, skip, sort, sort_desc, to, type; filters on other fields go in find = {device = …}))",
            "bad argument #1 to 'nightscout.client:entries' (opts.find: expected a table of field filters such as {device = \"xDrip\"})",
            "bad argument #1 to 'nightscout.client:upload_bg' (date: required (epoch ms or ISO string))",
            "bad argument #1 to 'nightscout.client:upload_bg' (sgv: expected a glucose value in mg/dL (1 to 1000))",
            "bad argument #1 to 'nightscout.client:upload_treatment' (eventType: required, e.g. \"Correction Bolus\" or \"Carb Correction\")",
            "bad argument #1 to 'nightscout.client:upload_treatment' (insulin: expected a non-negative number)",
            "bad argument #1 to 'nightscout.connect' (opts.url: expected http(s)://host[:port][/path])",
            "bad argument #1 to 'nightscout.connect' (unknown option 'colour' (known: api, fallback, jwt, secret, timeout, token, units, url))",
            "bad argument #1 to 'nightscout.connect' (opts.token: expected the credential as a non-empty string without control characters)",
            "bad argument #1 to 'nightscout.connect' (\(credentialReferenceRefusal("token_env", literal: "token")))",
            "bad argument #1 to 'nightscout.connect' (\(credentialReferenceRefusal("secret_env", literal: "secret")))",
            "bad argument #1 to 'nightscout.connect' (\(credentialReferenceRefusal("jwt_file", literal: "jwt")))",
            "bad self to 'nightscout.client:entries' (nightscout client expected, got no value); call it with ':'",
        ])
    }

    func testUploadsGoThroughTheOutboxAndSurviveFailures() async throws {
        await site.sim.inject(.status(503), count: 1, pathPrefix: "/api/v3/treatments")
        let store = try StateStore()
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local reader = assert(nightscout.client "reader")
            local r = assert(home:upload_treatment { eventType = "Note", notes = "queued", date = 1715076000000, device = "lua-outbox" })
            print(r.state, r.attempts, r.status, r.error ~= nil, r.next_attempt > r.created, r.source)
            local pending = assert(outbox.list())
            print(#pending, pending[1].id == r.id, pending[1].state)
            print(json.encode(assert(outbox.flush()), { sort_keys = true }))
            print(#assert(outbox.list()), assert(outbox.list { state = "sent" })[1].attempts)
            local seen = assert(home:treatments { from = 1715076000000, to = 1715076000000, find = { device = "lua-outbox" } })
            print(#seen, seen[1].identifier == r.id)
            local _, err = reader:upload_treatment { eventType = "Note", notes = "refused", date = 1715076000000, device = "lua-outbox-2" }
            local failed = assert(outbox.list { state = "failed" })
            print(#failed, failed[1].id == err.outbox_id, failed[1].status, failed[1].attempts)
            print(assert(outbox.retry(err.outbox_id)).attempts, assert(outbox.drop(err.outbox_id)), #assert(outbox.list()))
            local _, missing = outbox.drop("nope")
            print(missing.code)
            """, store: store)
        XCTAssertEqual(lines, [
            "pending\t1\t503\ttrue\ttrue\ttest.lua",
            "1\ttrue\tpending",
            #"{"failed":0,"retrying":0,"sent":1}"#,
            "0\t2",
            "1\ttrue",
            "1\ttrue\t403\t1",
            "2\ttrue\t0",
            "not_found",
        ])
        // Stored before sending: the store holds both items' history.
        let all = try await store.items(site: nil, states: Set(OutboxItem.State.allCases), limit: 10)
        XCTAssertEqual(all.map(\.state), [.sent])
    }
}
