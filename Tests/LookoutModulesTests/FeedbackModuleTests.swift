import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import NightscoutKit
import NorthlightKit
import XCTest

@testable import LookoutAutomation
@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutStore
import LookoutWire

/// One Northlight simulator for the test process: growth is limited to 2 requests a minute, free
/// to the seed's 5 items.
actor FeedbackModuleSim {
    static let shared = FeedbackModuleSim()

    struct Running: Sendable {
        let sim: NorthlightSimulator
        let url: URL
    }

    private var running: Running?

    func start() async throws -> Running {
        if let running { return running }
        let sim = NorthlightSimulator(options: .init(rateLimits: [.free: 100, .starter: 1000, .growth: 2]))
        let r = Running(sim: sim, url: try await sim.start())
        running = r
        return r
    }
}

/// The `feedback` Lua module against the simulator.
final class FeedbackModuleTests: XCTestCase {
    private var site: FeedbackModuleSim.Running!

    override func setUp() async throws { site = try await FeedbackModuleSim.shared.start() }

    /// Runs `source` with profiles `app` (starter), `busy` (growth: 2 requests a minute), `free`,
    /// `wrong` (an unknown key) and `offline` (nothing listens).
    private func run(_ source: String, store: StateStore? = nil, extraConfig: String = "", file: StaticString = #filePath,
                     line: UInt = #line) async throws -> (lines: [String], keys: [String: String]) {
        let keys = ["NL_APP": await site.sim.addProject(tier: .starter), "NL_BUSY": await site.sim.addProject(tier: .growth),
                    "NL_FREE": await site.sim.addProject(tier: .free), "NL_WRONG": "nl_wrong_key"]
        let config = try HostConfig(text: """
            [northlight.app]
            url = "\(site.url.absoluteString)"
            api_key_env = "NL_APP"
            user_id = "lua-user"
            email = "lua@example.com"
            [northlight.busy]
            url = "\(site.url.absoluteString)"
            api_key_env = "NL_BUSY"
            [northlight.free]
            url = "\(site.url.absoluteString)"
            api_key_env = "NL_FREE"
            [northlight.wrong]
            url = "\(site.url.absoluteString)"
            api_key_env = "NL_WRONG"
            [northlight.offline]
            url = "http://127.0.0.1:9/api/v1"
            api_key_env = "NL_APP"
            timeout = "5s"
            \(extraConfig)
            """)
        let store = try store ?? StateStore()
        let (transcript, outcome) = try await runLua(
            "local feedback = require 'feedback'\nlocal outbox = require 'outbox'\n" + source,
            modules: [FeedbackModule(config: config, store: store, environment: keys, retryPolicy: RetryPolicy(initialDelay: 3600)),
                      OutboxModule(store: store)])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return (transcript.lines, keys)
    }

    func testSubmitBugVoteBoardAndRoadmap() async throws {
        let (lines, keys) = try await run("""
            local app = assert(feedback.client "app")
            print(tostring(app):match("^feedback client app") ~= nil)
            local r = assert(app:submit { title = "Dark mode", description = "Please", category = "UI/UX" })
            print(r.state, #r.id)
            local b = assert(app:bug { title = "Crash", description = "On start", severity = "high", steps = "1. start" })
            print(b.state, #b.id)
            local board = assert(app:board { status = "suggested" })
            local mine
            for _, item in ipairs(board) do if item.id == r.id then mine = item end end
            print(mine.title, mine.status, mine.category, mine.vote_count)
            print(app:vote(r.id), app:vote(r.id), app:vote(r.id, "someone-else"))
            local approved = assert(app:board { status = { "approved" } })
            print(#approved, approved[1].status)
            local roadmap = assert(app:roadmap())
            print(#roadmap, roadmap[1].position, roadmap[1].feature.title, roadmap[1].estimated_date)
            print(table.concat(feedback.severities(), ","))
            """)
        XCTAssertEqual(lines, ["true", "sent\t36", "sent\t36", "Dark mode\tsuggested\tUI/UX\t0", "1\t1\t2", "1\tapproved",
                               "3\t1\tDark mode\t2024-Q2", "low,medium,high,critical"])
        let bugs = await site.sim.bugs(apiKey: keys["NL_APP"]!)
        XCTAssertEqual(bugs.first?["severity"]?.stringValue, "high")
        XCTAssertEqual(bugs.first?["user_email"]?.stringValue, "lua@example.com", "the profile's e-mail")
        XCTAssertEqual(bugs.first?["device_info"]?["app_version"]?.stringValue, LookoutVersion.current)
    }

    func testErrorsAreNilErrWithKinds() async throws {
        let (lines, _) = try await run("""
            local app = assert(feedback.client "app")
            local function show(r, err) print(r, err.code, err.field, err.service, err.retryable) end
            show(app:submit { title = "", description = "d" })
            show(app:submit { title = string.rep("x", 256), description = "d" })
            show(app:submit { title = "t" })
            show(app:submit { title = "t", description = "d", email = "nope" })
            show(app:bug { title = "t", description = "d", severity = "urgent" })
            show(app:vote("00000000-0000-4000-8000-00000000dead"))
            show(app:board { status = "bogus" })
            local wrong = assert(feedback.client "wrong")
            show(wrong:roadmap())
            local free = assert(feedback.client "free")
            for i = 1, 5 do assert(free:submit { title = "t" .. i, description = "d" }) end
            show(free:submit { title = "sixth", description = "d" })
            local none, err = feedback.client "missing"
            print(none, err.code, err.message:match("no %[northlight.missing%] profile") ~= nil)
            print(pcall(app.submit, app, { title = 1 }))
            print(pcall(app.submit, app, { title = "t", colour = "red" }))
            print(pcall(app.board, app, { refresh = "yes" }))
            """)
        XCTAssertEqual(lines[0], "nil\tinvalid_input\ttitle\tnorthlight\tfalse")
        XCTAssertEqual(lines[1], "nil\tinvalid_input\ttitle\tnorthlight\tfalse")
        XCTAssertEqual(lines[2], "nil\tinvalid_input\tdescription\tnorthlight\tfalse")
        XCTAssertEqual(lines[3], "nil\tinvalid_input\temail\tnorthlight\tfalse")
        XCTAssertEqual(lines[4], "nil\tinvalid_input\tseverity\tnorthlight\tfalse")
        XCTAssertEqual(lines[5], "nil\tinvalid_input\tfeedback_id\tnorthlight\tfalse")
        XCTAssertEqual(lines[6], "nil\tinvalid_input\tstatus\tnorthlight\tfalse")
        XCTAssertEqual(lines[7], "nil\tinvalid_api_key\tnil\tnorthlight\tfalse")
        XCTAssertEqual(lines[8], "nil\tfeedback_limit\tnil\tnorthlight\tfalse")
        XCTAssertEqual(lines[9], "nil\tconfig\ttrue")
        XCTAssertTrue(lines[10].hasPrefix("false\t") && lines[10].contains("opts.title: expected a string"), lines[10])
        XCTAssertTrue(lines[11].hasPrefix("false\t") && lines[11].contains("unknown option 'colour'"), lines[11])
        XCTAssertTrue(lines[12].hasPrefix("false\t") && lines[12].contains("opts.refresh: expected a boolean"), lines[12])
    }

    func testRateLimitedAndOfflineSubmissionsGoToTheOutbox() async throws {
        let store = try StateStore()
        let (lines, keys) = try await run("""
            local busy = assert(feedback.client "busy")
            assert(busy:roadmap { refresh = true })
            assert(busy:roadmap { refresh = true })
            local r, err = busy:roadmap { refresh = true }
            print(r, err.code, err.status, err.retryable, err.retry_after > 0)
            local q = assert(busy:submit { title = "later", description = "when the limit passes" })
            print(q.state, q.outbox_id ~= nil, q.error, q.retry_after > 0)
            local offline = assert(feedback.client "offline")
            local o = assert(offline:bug { title = "no network", description = "d" })
            print(o.state, o.error:match("^network error") ~= nil)
            for _, item in ipairs(assert(outbox.list())) do print(item.collection, item.state, item.attempts, item.status) end
            """, store: store)
        XCTAssertEqual(lines[0], "nil\trate_limited\t429\ttrue\ttrue")
        XCTAssertTrue(lines[1].hasPrefix("queued\ttrue\trate limit exceeded; retry after "), lines[1])
        XCTAssertEqual(lines[2], "queued\ttrue")
        XCTAssertEqual(Array(lines.dropFirst(3)).sorted(), ["northlight.bug\tpending\t1\tnil", "northlight.feedback\tpending\t1\t429"])
        let queued = try await store.items(site: nil, states: [.pending], limit: 10)
        XCTAssertEqual(Set(queued.map(\.site)), ["northlight:\(site.url.absoluteString)#profile:busy",
                                                 "northlight:http://127.0.0.1:9/api/v1#profile:offline"])
        for item in queued { XCTAssertFalse(String(decoding: item.body, as: UTF8.self).contains(keys["NL_BUSY"]!)) }
    }

    func testQueuedSubmissionIsSentByOutboxRetry() async throws {
        let store = try StateStore()
        await site.sim.injectFailures(status: 503, count: 1)
        let (lines, keys) = try await run("""
            local app = assert(feedback.client "app")
            local q = assert(app:submit { title = "after a 503", description = "d" })
            print(q.state, q.error)
            local item = assert(outbox.retry(q.outbox_id))
            print(item.state, item.attempts, item.collection)
            """, store: store)
        XCTAssertEqual(lines, ["queued\tserver error (HTTP 503)", "sent\t2\tnorthlight.feedback"])
        let board = await site.sim.feedback(apiKey: keys["NL_APP"]!)
        XCTAssertTrue(board.contains { $0["title"]?.stringValue == "after a 503" })
    }

    func testDefaultProfile() async throws {
        let config = try HostConfig(text: "[northlight.only]\nurl = \"\(site.url.absoluteString)\"\napi_key_env = \"K\"\n")
        let connection = try NorthlightConnection.profile(nil, config: config, appVersion: "1", environment: ["K": "key"])
        XCTAssertEqual(connection.profile, "only")
        let two = try HostConfig(text: "[northlight.a]\napi_key_env = \"K\"\n[northlight.b]\napi_key_env = \"K\"\n")
        XCTAssertThrowsError(try NorthlightConnection.profile(nil, config: two, appVersion: "1", environment: ["K": "key"]))
        let insecure = try HostConfig(text: "[northlight.a]\nurl = \"http://example.com/api\"\napi_key_env = \"K\"\n")
        XCTAssertThrowsError(try NorthlightConnection.profile("a", config: insecure, appVersion: "1", environment: ["K": "key"])) {
            XCTAssertTrue("\($0)".contains("HTTPS is required"), "\($0)")
        }
        let unset = try HostConfig(text: "[northlight.a]\napi_key_env = \"UNSET_NL_KEY\"\n")
        XCTAssertThrowsError(try NorthlightConnection.profile("a", config: unset, appVersion: "1", environment: [:])) {
            XCTAssertTrue("\($0)".contains("UNSET_NL_KEY is not set"), "\($0)")
        }
    }
}
