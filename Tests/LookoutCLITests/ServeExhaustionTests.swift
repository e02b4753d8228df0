import Foundation
import LookoutSim
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Issue 24: every exhaustion script of §2–3 at once under one real `lookout serve`, beside a
/// healthy `schedule.every` script: requests that never end, a log flood, uploads to a dead site,
/// refused remote commands with 1 MiB names, and a store filled to its quota. The healthy script
/// keeps its period, `/status` answers, memory, the state database and the output stay within
/// their bounds, and SIGTERM ends within the drain + 1 s.
final class ServeExhaustionTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    private static let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))

    func testEveryExhaustionScriptBesideAHealthyOne() async throws {
        let url = try await Self.simulator.start()
        await Self.simulator.seed("profile", [[
            "startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
            "loopSettings": ["deviceToken": "0123abcd", "bundleIdentifier": "com.LOOKOUT01.loopkit.Loop"],
        ]])
        let silent = try SilentTCPServer()
        defer { silent.stop() }
        let dead = try freePort()
        try """
            [nightscout.loop]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 4
            overrides = ["Exercise"]
            [nightscout.down]
            url = "http://127.0.0.1:\(dead)"
            secret_env = "NS_SECRET"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["NS_SECRET": "this is my long pass phrase", "LOOP_OTP": Self.simulator.options.loop.otpURL]

        try writeFile("Scripts/healthy.lua", """
            local script = require "script"
            require("schedule").every(1, function() print(string.format("tick %.3f", script.uptime())) end, { name = "tick" })
            """)
        // §2: thousands of requests to a server that never answers.
        try writeFile("Scripts/requests.lua", """
            local http, script = require "http", require "script"
            for i = 1, 5000 do
              task.spawn(function()
                while script.uptime() < 40 do
                  local _, err = http.get("\(silent.baseURL)/hold/" .. i, { timeout = 4 })
                  if err and err.code == "limit" then sleep(0.5) end
                end
              end)
            end
            """)
        // §3: 64 KiB log lines as fast as the script can write them.
        try writeFile("Scripts/logs.lua", """
            local line = string.rep("x", 1 << 16)
            while true do log.info(line) sleep(0) end
            """)
        // §3: 256 KiB uploads to a site that is down, until the outbox quota refuses them.
        try writeFile("Scripts/uploads.lua", """
            local down = assert(require("nightscout").client "down")
            local note = string.rep("n", 1 << 18)
            while true do
              local _, err = down:upload_treatment { eventType = "Note", notes = note }
              if err and err.code == "quota" then print("outbox quota: " .. err.message) sleep(1) else sleep(0) end
            end
            """)
        // §3: refused remote commands with 1 MiB override names.
        try writeFile("Scripts/refusals.lua", """
            local loop = assert(require("nightscout").client "loop")
            local name = string.rep("y", 1 << 20)
            for i = 1, 200 do loop:override(name .. (i % 3), { wait = false }) end
            print("refusals done")
            """)
        // §3: the store filled to its quota.
        try writeFile("Scripts/store.lua", """
            local store = require "store"
            local value = string.rep("s", 1 << 20)
            for i = 1, 100 do
              local ok, err = store.set("k" .. i, value)
              if not ok then print("store refused: " .. err.code) break end
            end
            """)

        let port = try freePort()
        let serve = try launch(["serve", "--status-port", String(port), "--drain", "2s"], environment: env)
        XCTAssertTrue(serve.waitForOutput(containing: "[refusals.lua] refusals done", timeout: 90))
        XCTAssertTrue(serve.waitForOutput(containing: "[store.lua] store refused: quota", timeout: 30))
        XCTAssertTrue(serve.waitForOutput(containing: "[uploads.lua] outbox quota: ", timeout: 60))

        var mark = serve.outputCount
        var peak = 0
        var slowStatus = 0
        for _ in 0..<10 {
            guard serve.waitForOutput(after: mark, timeout: 10, "the next tick", until: { $0.contains("[healthy.lua] tick ") }) else { break }
            mark = serve.outputCount
            if ServeFloodTests.getStatus(port: port, timeout: 3) == nil { slowStatus += 1 }
            peak = max(peak, ServeFloodTests.residentBytes(pid: serve.pid))
        }
        XCTAssertEqual(slowStatus, 0, "GET /status went unanswered")
        let ticks = serve.output().split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("[healthy.lua] tick ") else { return nil }
            return Double(line.dropFirst("[healthy.lua] tick ".count))
        }
        let recent = Array(ticks.suffix(10))
        XCTAssertEqual(recent.count, 10, serve.output(.stderr).suffix(2000).description)
        let gaps = zip(recent.dropFirst(), recent).map { $0 - $1 }
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 2.0, "gaps between the healthy script's ticks: \(gaps)")
        XCTAssertLessThan(peak, ServeFloodTests.memoryCeiling, "resident memory \(peak >> 20) MB")
        // The database: the outbox quota (16 MiB), the store quota (10 MiB), short audit rows.
        let database = [home + "/state/lookout.sqlite3", home + "/state/lookout.sqlite3-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
        XCTAssertLessThan(database, 48 << 20, "state database \(database >> 20) MB")
        // The output: 64 KiB lines cut to 4 KiB and rate-limited, not tens of megabytes a second.
        let output = serve.output().utf8.count + serve.output(.stderr).utf8.count
        XCTAssertLessThan(output, 8 << 20, "\(output >> 20) MB of output")

        let signalled = Date()
        serve.send(signal: SIGTERM)
        let result = serve.waitForExit(timeout: 60)
        XCTAssertLessThanOrEqual(Date().timeIntervalSince(signalled), 3.0, "SIGTERM took too long")
        if let result { assertExit(result, 0) }
    }
}
