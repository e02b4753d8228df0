import Foundation
import LookoutSim
import XCTest

/// Simulators for the fuzz run, started once per test process and never stopped (stopping a
/// server while a connection arrives can trap in NIO).
actor NumberFuzzSims {
    static let shared = NumberFuzzSims()

    struct Running: Sendable {
        let nightscout: URL
        let signalk: URL
        let garmin: URL
        let northlight: URL
        let northlightKey: String
    }

    private var running: Running?

    func get() async throws -> Running {
        if let running { return running }
        let northlight = NorthlightSimulator()
        let northlightURL = try await northlight.start()
        let r = Running(
            nightscout: try await NightscoutSimulator(options: .init()).start(),
            signalk: try await SignalKSimulator(options: .init(rate: 10, seed: 3, autoTick: false)).start(),
            garmin: try await GarminSimulator().start(),
            northlight: northlightURL,
            northlightKey: await northlight.addProject(tier: .starter))
        running = r
        return r
    }
}

/// Numbers that used to trap the whole process (`Int64(seconds * 1e9)` overflow, exit 132), run
/// through a real `lookout run`, so that a trap fails one test instead of the test runner.
final class NumberCrashTests: CLITestCase, @unchecked Sendable {
    /// Each script ends with exit status 1 and a `bad argument` error naming the limit.
    func testNumbersThatUsedToTrapRaiseBadArgument() throws {
        let cases: [(script: String, message: String)] = [
            ("sleep(1e10)", "bad argument #1 to 'script.sleep' (duration must be between 0s and 366d, got 10000000000)"),
            ("sleep('2600000h')", "bad argument #1 to 'script.sleep' (duration must be between 0s and 366d, got \"2600000h\")"),
            ("sleep(0/0)", "bad argument #1 to 'script.sleep' (duration must be between 0s and 366d, got nan)"),
            ("sleep(-1/0)", "bad argument #1 to 'script.sleep' (duration must be between 0s and 366d, got -inf)"),
            ("timer.after(1e10, print)", "bad argument #1 to 'timer.after' (duration must be between 0s and 366d"),
            ("timer.every(2^63, print)", "bad argument #1 to 'timer.every' (duration must be between 0s and 366d"),
            ("timer.after(1e300, print)", "bad argument #1 to 'timer.after' (duration must be between 0s and 366d"),
            ("task.wait(task.spawn(function() end), 1e10)", "bad argument #2 to 'task.wait' (duration must be between 0s and 366d"),
            ("task.spawn(function() end):wait(1/0)", "bad argument #1 to 'task:wait' (duration must be between 0s and 366d, got inf)"),
            ("require('nightscout').connect { url = 'http://127.0.0.1:9', timeout = 1e300 }",
             "bad argument #1 to 'nightscout.connect' (opts.timeout must be between 0s and 1d, got 1e+300)"),
            ("require('signalk').connect { url = 'http://127.0.0.1:9', timeout = 1e300 }",
             "bad argument #1 to 'signalk.connect' (opts.timeout must be between 0s and 1d, got 1e+300)"),
            ("require('signalk').connect { url = 'http://127.0.0.1:9', timeout = '2600000h' }",
             "bad argument #1 to 'signalk.connect' (opts.timeout must be between 0s and 1d, got \"2600000h\")"),
            ("require('http').get('http://127.0.0.1:9', { timeout = 1e300 })",
             "bad argument #2 to 'http.get' (opts.timeout must be between 0s and 1d, got 1e+300)"),
            ("require('schedule').every(1e10, print)", "bad argument #1 to 'schedule.every' (interval must be between 0s and 366d"),
            ("local alert = require 'alert'\nalert.define { id = 'x', series = function() return 1 end, when = alert.above(1), stale = 1e300 }",
             "opts.stale: duration must be between 0s and 366d, got 1e+300"),
        ]
        for (script, message) in cases {
            let result = try runScript(script, name: "hostile.lua")
            XCTAssertEqual(result.exitCode, 1, "\(script)\n\(result)")
            XCTAssertTrue(result.stderr.contains(message), "\(script): expected \(message)\n\(result)")
        }
    }

    /// The generated fuzz (every module function and documented method, every hostile value)
    /// through `lookout run`: the process survives, and every call works or raises clearly.
    func testEveryBindingSurvivesHostileNumbersInARealRun() async throws {
        let sims = try await NumberFuzzSims.shared.get()
        try """
            [garmin.fuzz]
            url = "\(sims.garmin.absoluteString)"
            garth_home = "\(home)/garth"
            [northlight.fuzz]
            url = "\(sims.northlight.absoluteString)"
            api_key_env = "FUZZ_NL_KEY"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let stubsResult = try lookout(["stubs", root + "/stubs"])
        assertExit(stubsResult, 0)
        var stubs: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: root + "/stubs") where file.hasSuffix(".lua") {
            stubs[String(file.dropLast(4))] = try String(contentsOfFile: root + "/stubs/" + file, encoding: .utf8)
        }
        let input: [String: Any] = [
            "stubs": stubs, "nightscout_url": sims.nightscout.absoluteString, "signalk_url": sims.signalk.absoluteString,
            "http_url": sims.nightscout.absoluteString,
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self)
        let driverURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lua/number_fuzz.lua")
        let driver = try String(contentsOf: driverURL, encoding: .utf8)
        try writeFile("fuzz.lua", "FUZZ = json.decode(\(Self.longString(json)))\n" + driver)
        let result = try lookout(["run", "--cpu-limit", "0", "fuzz.lua"], environment: ["FUZZ_NL_KEY": sims.northlightKey], timeout: 600)
        XCTAssertEqual(result.exitCode, 0, "a trap ends with a signal (exit 132 or 134)\n\(result.description.suffix(4000))")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.hasPrefix("problem") }, [])
        let summary = lines.last { $0.hasPrefix("summary") }
        XCTAssertNotNil(summary, result.description.suffix(4000).description)
    }

    private static func longString(_ text: String) -> String {
        var level = 0
        while text.contains("]" + String(repeating: "=", count: level) + "]") { level += 1 }
        let equals = String(repeating: "=", count: level)
        return "[\(equals)[\(text)]\(equals)]"
    }
}
