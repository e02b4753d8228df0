import Foundation
import Hummingbird
import LookoutConfig
import LookoutSim
import LookoutStore
import LookoutTestSupport
import LookoutWire
import XCTest

/// Issue 25 §2–3 with real processes: several `lookout serve --cluster` instances on one
/// PostgreSQL share the scripts of one folder (alerts, uploads and remote commands for three
/// Nightscout sites). One instance is killed, one joins, one is paused past its lease and
/// resumed, and the database restarts; after all of it every alert episode was notified exactly
/// once, every upload stored exactly once, and no more than one budget of insulin was sent to
/// the pump, with every refusal audited.
final class ClusterServeTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulators and the recorder are used from the test's task.

    /// Seconds a lease lasts in these tests (`--lease 3s`): work moves within 4 s.
    private let ttl: TimeInterval = 3
    private let sites = ["site1", "site2", "site3"]
    private let uploads = 30
    private var instances: [String: ChildProcess] = [:]

    func testInstancesShareWorkAndSurviveKillJoinPauseAndDatabaseRestart() async throws {
        began = Date()
        let database = try PostgresTestCluster.forTest()
        let location = try PostgresLocation.parse(try database.createDatabase(prefix: "cluster"))
        let view = try await PostgresStateStore.open(location: location, password: database.adminPassword, timeout: .seconds(2))
        defer { view.close() }
        let hook = WebhookRecorder()
        let recorder = try await HTTPTestServer.start(router: hook.router())
        var simulators: [NightscoutSimulator] = []
        var urls: [URL] = []
        for _ in sites {
            let sim = NightscoutSimulator(options: .init(authFailDelay: .zero))
            let url = try await sim.start()
            let now = Date().timeIntervalSince1970 * 1000
            await sim.seed("entries", (0..<6).map { k in
                ["type": "sgv", "sgv": 60, "direction": "Flat", "date": .number(now - Double(k) * 60_000)]
            })
            await sim.seed("profile", [[
                "startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
                "loopSettings": ["deviceToken": "0123abcd", "bundleIdentifier": "com.LOOKOUT01.loopkit.Loop"],
            ]])
            simulators.append(sim)
            urls.append(url)
        }
        let started = simulators
        defer { Task { for sim in started { await sim.stop() }; await recorder.stop() } }

        // One low-alert script bound to every site's profile: one Lua state and one lease per site.
        var config = """
            [serve.bind]
            "low.lua" = ["nightscout.site*"]

            [state]
            url = "\(location.description)"
            password_env = "LOOKOUT_DB_PASSWORD"

            [notify.hook]
            type = "webhook"
            url = "http://127.0.0.1:\(recorder.port)/hook"

            """
        for (site, url) in zip(sites, urls) {
            config += """
                [nightscout.\(site)]
                url = "\(url.absoluteString)"
                secret_env = "NS_SECRET"
                otp_url_env = "LOOP_OTP"
                remote = "live"
                max_bolus = 2
                max_bolus_per_hour = 4

                """
        }
        try config.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("scripts/low.lua", lowAlert)
        for site in sites { try writeFile("scripts/upload-\(site).lua", uploader(site)) }
        // Three scripts send 2 U boluses to site1's pump, whichever instances run them.
        for n in 1...3 { try writeFile("scripts/bolus-\(n).lua", boluses) }
        // One script posts its holding's number every 0.1 s: two holdings running at once show
        // as an older token arriving after a newer one.
        try writeFile("scripts/ticker.lua", ticker(port: recorder.port))
        let works = Set(sites.flatMap { ["low.lua@\($0)", "upload-\($0).lua"] } + (1...3).map { "bolus-\($0).lua" } + ["ticker.lua"])
        let env = [
            "LOOKOUT_DB_PASSWORD": database.adminPassword, "NS_SECRET": "this is my long pass phrase",
            "LOOP_OTP": simulators[0].options.loop.otpURL,
        ]
        for name in ["a", "b", "c"] { try start(name, env: env) }

        // Every script runs on exactly one instance, in balance (4, 3 and 3).
        try await eventually("all work held, in balance") {
            let held = try await self.holders(view)
            return Set(held.keys) == works && Set(held.values).count == 3
                && Dictionary(grouping: held.values, by: { $0 }).values.map(\.count).sorted() == [3, 3, 4]
        }
        try await eventually("each site's low alert notified") { self.sites.allSatisfy { hook.count(of: "Low (\($0))") >= 1 } }

        // Kill the instance running site1's low alert: another takes it over within the lease and a renewal.
        let victim = try await holder(of: "low.lua@site1", view)
        let killedAt = Date()
        instances[victim]?.send(signal: SIGKILL)
        try await eventually("low.lua@site1 taken over after SIGKILL", timeout: 4 * (ttl + ttl / 3)) {
            let now = try await self.holders(view)["low.lua@site1"]
            return now != nil && now != victim
        }
        let takeover = Date().timeIntervalSince(killedAt)
        print("takeover after SIGKILL: \(String(format: "%.1f", takeover)) s (stated: \(ttl + ttl / 3) s)")
        killedOutput = instances[victim]?.output()
        instances[victim] = nil

        // A new instance joins: the work comes back in balance (4, 3 and 3).
        try start("d", env: env)
        try await eventually("balance after a join") {
            let held = try await self.holders(view)
            return held.count == works.count && Set(held.values).count == 3
                && Dictionary(grouping: held.values, by: { $0 }).values.map(\.count).sorted() == [3, 3, 4]
        }

        // Pause the instance running the ticker past its lease; the work moves; it wakes up and
        // stops its scripts without sending anything under the lease it lost.
        let paused = try await holder(of: "ticker.lua", view)
        instances[paused]?.send(signal: SIGSTOP)
        try await eventually("ticker.lua taken over from a paused instance") {
            let now = try await self.holders(view)["ticker.lua"]
            return now != nil && now != paused
        }
        let newToken = hook.ticks.count
        try await eventually("the new holding ticks") { hook.ticks.count > newToken + 3 }
        instances[paused]?.send(signal: SIGCONT)
        let woken = try XCTUnwrap(instances[paused])
        try await eventually("the woken instance notices its lease moved on") {
            woken.output(.stderr).contains("ticker.lua: its lease moved on; stopping it here")
        }
        let ticks = hook.ticks
        XCTAssertGreaterThanOrEqual(Set(ticks.map { $0.split(separator: " ")[1] }).count, 2, "the ticker ran under two holdings")
        XCTAssertNil(WebhookRecorder.overlap(in: ticks), "two holdings ran at once")

        // The database restarts: scripts stop as their leases run out, and everything resumes.
        try database.stopServer()
        var restarted = false
        defer { if !restarted { try? database.startServer() } }
        try await eventually("instances notice the database is gone") {
            self.instances.values.allSatisfy { $0.output(.stderr).contains("cannot reach the database") }
        }
        try database.startServer()
        restarted = true
        try await eventually("all work held again after the restart", timeout: 60) {
            try await Set(self.holders(view).keys) == works
        }
        try await eventually("every upload made", timeout: 90) {
            await self.uploaded(simulators).allSatisfy { Set($0).count >= self.uploads }
        }

        // Doctor and status see the cluster (once it has settled: a piece given up to rebalance
        // waits for its next holder's heartbeat).
        try await eventually("the cluster settles") {
            let held = try await self.holders(view)
            return held.count == works.count && Dictionary(grouping: held.values, by: { $0 }).values.map(\.count).sorted() == [3, 3, 4]
        }
        let doctor = try lookout(["doctor"], environment: env)
        for line in ["(schema v10-alert-snoozes", "append-only in the database", "clock is", "3 live instances",
                     "10 of 10 pieces of work running"] {
            XCTAssertTrue(doctor.stdout.contains(line), "doctor lacks \(line):\n\(doctor.stdout)")
        }
        let status = try lookout(["status", "--cluster", "test"], environment: env)
        assertExit(status, 0)
        XCTAssertTrue(status.stdout.contains("cluster test: 3 live instances, 10 of 10 pieces of work running"), status.stdout)
        XCTAssertTrue(status.stdout.contains("low.lua@site2"), status.stdout)

        for process in instances.values { process.send(signal: SIGTERM) }
        for process in instances.values { _ = process.waitForExit(timeout: 30) }

        // Exactly once: one notification per site's low episode, one document per upload.
        for site in sites { XCTAssertEqual(hook.count(of: "Low (\(site))"), 1, "\(site): \(hook.bodies)") }
        for (site, notes) in zip(sites, await uploaded(simulators)) {
            XCTAssertEqual(notes.count, uploads, "\(site): \(notes)")
            XCTAssertEqual(Set(notes).count, notes.count, "\(site): stored twice: \(notes)")
        }
        // One budget for the pump across every instance: at most 4 U enacted, every refusal audited.
        let pushed = await simulators[0].receivedLoopNotifications().filter { $0.status == 200 && $0.push != nil }
            .compactMap { $0.push?.payload["bolus-entry"]?.doubleValue }
        XCTAssertLessThanOrEqual(pushed.reduce(0, +), 4, "\(pushed)")
        let printed = instances.values.map { $0.output() }.joined() + (killedOutput ?? "")
        let refusedPrinted = printed.split(separator: "\n").filter { $0.hasPrefix("refused:exceedsHourlyTotal") }.count
        let audited = try await view.auditLog(site: nil, limit: 10_000).filter { $0.entry.phase == .refused }
            .reduce(0) { $0 + 1 + $1.repeats }
        XCTAssertGreaterThanOrEqual(audited, refusedPrinted, "every refusal a script saw is audited")

        // A stopped cluster leaves nothing held; doctor notices an audit log the database no longer protects.
        let after = try await holders(view)
        XCTAssertEqual(after, [:], "a clean stop releases every lease")
        _ = try database.psql("DROP TRIGGER audit_no_truncate ON audit", database: location.database)
        let unprotected = try lookout(["doctor"], environment: env)
        XCTAssertTrue(unprotected.stdout.contains("the audit log can be changed: missing audit_no_truncate"), unprotected.stdout)
    }

    // MARK: Scripts

    /// The alert reads the site of its binding through its `site` setting.
    private let lowAlert = """
        local alert = require "alert"
        local config = require "config"
        local nightscout = require "nightscout"
        local s = config.settings { site = "home" }
        local home = assert(nightscout.client(s.site))
        local low = alert.define {
          id = "low", title = "Low", notify = { "hook" },
          series = function()
            local entries = home:entries { count = 6, type = "sgv" }
            if not entries then return nil end
            local points = {}
            for i = #entries, 1, -1 do points[#points + 1] = { entries[i].sgv, entries[i].date } end
            return points
          end,
          when = alert.below(70), clear = alert.above(80),
        }
        timer.every(0.5, function() low:check() end)
        """

    /// Uploads notes 1…N, one every 0.2 s, counting in the store after each upload (an upload
    /// made again after a takeover has the same identifier: date and device).
    private func uploader(_ site: String) -> String {
        """
        local nightscout = require "nightscout"
        local store = require "store"
        local home = assert(nightscout.client("\(site)"))
        timer.every(0.2, function()
          local k = (store.get("k") or 0) + 1
          if k > \(uploads) then return end
          local item, err = home:upload_treatment { eventType = "Note", notes = "n" .. k,
            date = 1714557600000 + k * 60000, device = "cluster-test" }
          if item then store.set("k", k) else log.warn("upload " .. k .. ": " .. err.code) end
        end)
        """
    }

    private func ticker(port: Int) -> String {
        """
        local http = require "http"
        local store = require "store"
        -- A new number for every Lua state that runs it, on whichever instance.
        local token = tostring(assert(store.update("holding", function(n) return (n or 0) + 1 end)))
        timer.every(0.1, function() http.post("http://127.0.0.1:\(port)/tick", "ticker " .. token .. " " .. os.time()) end)
        """
    }

    private let boluses = """
        local nightscout = require "nightscout"
        local loop = assert(nightscout.client("site1"))
        timer.every(1, function()
          local r, err = loop:bolus(2, { wait = false })
          print(r and r.state or ("refused:" .. tostring(err.reason or err.code)))
        end)
        """

    // MARK: Helpers

    private var killedOutput: String?

    private func start(_ name: String, env: [String: String]) throws {
        instances[name] = try launch(
            ["serve", "--cluster", "test", "--instance", name, "--lease", "\(Int(ttl))s", "--drain", "2s", "--status-port", "0",
             work + "/scripts"],
            environment: env)
    }

    /// Work → the instance holding its lease now.
    private func holders(_ store: PostgresStateStore) async throws -> [String: String] {
        let view = try await store.clusterView(cluster: "test")
        return view.held.compactMapValues(\.holder)
    }

    private func holder(of work: String, _ store: PostgresStateStore) async throws -> String {
        let held = try await holders(store)[work]
        return try XCTUnwrap(held, "nobody holds \(work)")
    }

    /// The notes each site's simulator stored, per site.
    private func uploaded(_ simulators: [NightscoutSimulator]) async -> [[String]] {
        var result: [[String]] = []
        for sim in simulators {
            result.append(await sim.documents("treatments").compactMap { $0["notes"]?.stringValue })
        }
        return result
    }

    private var began = Date()

    /// `CLITestCase.eventually`, failing with what every instance wrote to stderr; each step
    /// prints when it was reached (a failure in CI shows how long the steps before it took).
    private func eventually(_ what: String, timeout: TimeInterval = 30,
                            _ condition: @escaping () async throws -> Bool) async throws {
        print(String(format: "%6.1f s: waiting for %@", Date().timeIntervalSince(began), what))
        try await eventually(what, timeout: timeout, logs: {
            self.instances.sorted { $0.key < $1.key }.map { "--- \($0.key):\n\($0.value.output(.stderr).suffix(3000))" }
                .joined(separator: "\n")
        }, condition)
    }
}

/// Records the bodies of webhook notifications.
final class WebhookRecorder: Sendable {
    private let received = Locked<[String]>([])

    /// Every body received, in order.
    var bodies: [String] { received.withLock { $0 } }

    private let tokens = Locked<[String]>([])

    /// The ticker's tokens, in the order they arrived.
    var ticks: [String] { tokens.withLock { $0 } }

    /// The first tick (`NAME HOLDING TIME`) that a holding started more than a second (the
    /// clock's resolution) after a later holding's first tick: two holdings running at once.
    static func overlap(in ticks: [String]) -> String? {
        let parsed = ticks.compactMap { tick -> (holding: Int, time: Int)? in
            let words = tick.split(separator: " ")
            guard words.count == 3, let holding = Int(words[1]), let time = Int(words[2]) else { return nil }
            return (holding, time)
        }
        var firstStart: [Int: Int] = [:]
        for tick in parsed where firstStart[tick.holding].map({ tick.time < $0 }) ?? true { firstStart[tick.holding] = tick.time }
        for (i, tick) in parsed.enumerated() {
            if let next = firstStart.filter({ $0.key > tick.holding }).values.min(), tick.time > next + 1 {
                return "holding \(tick.holding) ticked at \(tick.time), after holding started at \(next): \(ticks[i])"
            }
        }
        return nil
    }

    /// The tickers heard from: the first word of each token (`ticker-1.lua 123…`).
    var tickers: Set<String> { Set(ticks.compactMap { $0.split(separator: " ").first.map(String.init) }) }

    /// How many bodies contain `text`.
    func count(of text: String) -> Int { bodies.filter { $0.contains(text) }.count }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("hook") { [received] request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            received.withLock { $0.append(String(buffer: body)) }
            return .ok
        }
        router.post("tick") { [tokens] request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 10)
            tokens.withLock { $0.append(String(buffer: body)) }
            return .ok
        }
        return router
    }
}
