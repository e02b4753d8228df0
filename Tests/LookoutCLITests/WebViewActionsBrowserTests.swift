import Foundation
import LookoutSim
import LookoutWire
import LookoutTestSupport
import XCTest

/// More of the web view in a real browser (issue 28): snoozing an alert from the page, the
/// scripts' live lines (secrets redacted), a sleeping script. Each test starts the real binary
/// with the ready low alert against the Nightscout simulator (urgent low firing), a webhook
/// receiver as the notify recorder, and drives Debian's Chromium with Playwright
/// (`web_view_actions.py`, one mode per test). Screenshots go to `.build/test-artifacts/web-view/`.
final class WebViewActionsBrowserTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is used from the test's own task only.

    /// A running serve with its recorder, for one browser run.
    struct Setup {
        var serve: ChildProcess
        var hook: HoldingHTTPPeer
        var simulator: NightscoutSimulator
        var port: Int
        var token: String
        var login: String
    }

    private static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Starts serve with `low-alert.lua` and `scripts` (name → source, given the Nightscout token
    /// and the recorder's base URL) and waits until urgent-low has notified twice. The recorder
    /// never answers requests under `/hold`.
    func start(scripts: (_ token: String, _ recorder: String) -> [String: String] = { _, _ in [:] }) async throws -> Setup {
        let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))
        let nsURL = try await simulator.start()
        let token = await simulator.addSubject(name: "web", roles: ["admin"])
        await simulator.seed("entries", WebViewBrowserTests.readings(WebViewBrowserTests.fallingValues, until: Date()))
        let hook = try HoldingHTTPPeer { request, _ in request.path.hasPrefix("/hold") ? .hold : .status(200) }
        let port = try freePort()
        try WebViewBrowserTests.config(nightscout: nsURL, hook: hook.baseURL).write(toFile: home + "/config.toml", atomically: true,
                                                                                   encoding: .utf8)
        try writeFile("Scripts/low-alert.lua", try String(contentsOf: Self.repository.appendingPathComponent("Scripts/low-alert.lua"),
                                                          encoding: .utf8))
        for (name, source) in scripts(token, hook.baseURL) { try writeFile("Scripts/" + name, source) }
        let serve = try launch(["serve", "--status-port", String(port)], environment: ["WEB_NS_TOKEN": token])
        XCTAssertTrue(hook.waitFor("urgent-low notified twice (first and a repeat)", timeout: 90) { requests in
            requests.filter { $0.body.contains(#""alert_id":"urgent-low""#) }.count >= 2
        }, serve.output())
        let login = try lookout(["web", "login"])
        assertExit(login, 0)
        return Setup(serve: serve, hook: hook, simulator: simulator, port: port, token: token,
                     login: login.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Runs `web_view_actions.py` in `mode` against `setup`; returns its findings (JSON) when it passed.
    @discardableResult
    func browse(_ mode: String, _ setup: Setup, extra: [String: String] = [:]) async throws -> [String: Any]? {
        let chromium = "/usr/bin/chromium"
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            throw skipTest("no \(chromium): .ci/install-deps installs Debian's chromium")
        }
        let (python, _) = try WebViewBrowserTests.playwright.pythonOrSkip()
        try FileManager.default.createDirectory(at: WebViewBrowserTests.artifacts, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("web_view_actions.py")
        let result = try await PythonVenv.runOffPool(python, [script.path], environment: [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": root,
            "WEB_MODE": mode, "WEB_BASE": "http://127.0.0.1:\(setup.port)", "WEB_LOGIN_URL": setup.login,
            "WEB_ARTIFACTS": WebViewBrowserTests.artifacts.path, "WEB_CHROMIUM": chromium,
        ].merging(extra) { $1 }, timeout: 180, threadName: "web view actions")
        let findings = String(decoding: result.stdout, as: UTF8.self)
        XCTAssertTrue(result.succeeded, "browser checks (\(mode)) failed: \(result.summary)\nfindings: \(findings)\nserve:\n\(setup.serve.output())")
        print("web view \(mode) findings: \(findings)")
        guard result.succeeded else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(findings.utf8))) as? [String: Any] ?? [:]
    }

    /// Snoozing urgent-low from the page (CSRF token required) stops its repeats, the snooze
    /// names who gave it and until when, on the page and in `lookout ack --list`.
    func testSnoozingFromThePageStopsTheRepeats() async throws {
        let setup = try await start()
        defer { setup.serve.terminate(); setup.hook.stop(); Task { await setup.simulator.stop() } }
        guard try await browse("snooze", setup) != nil else { return }
        let urgent = #""alert_id":"urgent-low""#
        let snoozed = setup.hook.requests(containing: urgent).count
        let list = try lookout(["ack", "--list"])
        XCTAssertTrue(list.stdout.contains("ben until"), list.stdout)
        XCTAssertTrue(list.stdout.contains("snoozed"), list.stdout)
        // Three repeat periods without a repeat.
        let watchUntil = Date().addingTimeInterval(10)
        while Date() < watchUntil {
            XCTAssertEqual(setup.hook.requests(containing: urgent).count, snoozed,
                           "urgent-low repeated after it was snoozed from the page:\n\(setup.serve.output())")
            if setup.hook.requests(containing: urgent).count != snoozed { break }
            try await Task.sleep(for: .milliseconds(250))  // watching for an absence, not synchronising
        }
    }

    /// A script's lines reach the page live (without a reload), and a configured secret that a
    /// script prints shows redacted.
    func testScriptLinesShowLiveWithoutSecrets() async throws {
        let marker = "tick-marker"
        let setup = try await start(scripts: { token, _ in ["chatty.lua": """
            local n = 0
            print("the site's token is \(token)")
            timer.every("1s", function() n = n + 1; log.info("\(marker) " .. n) end)
            """] })
        defer { setup.serve.terminate(); setup.hook.stop(); Task { await setup.simulator.stop() } }
        try await browse("lines", setup, extra: ["WEB_SECRET": setup.token, "WEB_MARKER": marker])
    }

    /// A script that only waits for its timer shows as sleeping; one waiting for an answer from
    /// the network shows as running.
    func testAScriptWaitingOnItsTimerShowsSleeping() async throws {
        let setup = try await start(scripts: { _, recorder in [
            "sleepy.lua": #"timer.every("1h", function() log.info("hourly") end)"#,
            "waiting.lua": """
                local http = require "http"
                while true do http.get("\(recorder)/hold", { timeout = "10m" }) end
                """,
        ] })
        defer { setup.serve.terminate(); setup.hook.stop(); Task { await setup.simulator.stop() } }
        try await browse("sleeping", setup)
    }

    /// An alert still firing whose condition no longer holds, while its `clear` condition does not
    /// yet (urgent-low at 60: not below 55, not yet above 65), shows as recovering.
    func testAnAlertOnItsWayBackShowsRecovering() async throws {
        let setup = try await start()
        defer { setup.serve.terminate(); setup.hook.stop(); Task { await setup.simulator.stop() } }
        await setup.simulator.seed("entries", [["type": "sgv", "sgv": 60, "date": .int(Int64(Date().timeIntervalSince1970 * 1000)),
                                                "direction": "FortyFiveUp", "device": "web-view-test"]])
        try await browse("recovering", setup)
    }
}
