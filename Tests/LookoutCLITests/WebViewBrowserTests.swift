import Foundation
import LookoutSim
import LookoutWire
import LookoutTestSupport
import XCTest

/// The web view of `lookout serve` in a real browser (issue 28): the real binary with the ready
/// low alert against the Nightscout simulator, a webhook receiver as the notify recorder, and
/// Debian's Chromium driven by Playwright (`web_view_browser.py`, never a downloaded browser).
/// Screenshots are kept under `.build/test-artifacts/web-view/` (the path is printed).
final class WebViewBrowserTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is used from the test's own task only.

    static let playwright = PythonVenv(label: "web view browser test", packages: ["playwright"])

    private static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Where screenshots go: `.build/test-artifacts/web-view` of the package.
    static var artifacts: URL { repository.appendingPathComponent(".build/test-artifacts/web-view") }

    func testAPersonSeesTheLowFiringAndAcknowledgesItFromThePage() async throws {
        let chromium = "/usr/bin/chromium"
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            throw skipTest("no \(chromium): .ci/install-deps installs Debian's chromium")
        }
        let (python, _) = try Self.playwright.pythonOrSkip()

        // Nightscout with an hour of readings falling to 50 mg/dL (urgent low below 55).
        let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))
        let nsURL = try await simulator.start()
        defer { Task { await simulator.stop() } }
        let token = await simulator.addSubject(name: "web", roles: ["admin"])
        let values = Self.fallingValues
        await simulator.seed("entries", Self.readings(values, until: Date()))

        let hook = try HoldingHTTPPeer { _, _ in .status(200) }
        defer { hook.stop() }
        let port = try freePort()
        try Self.config(nightscout: nsURL, hook: hook.baseURL).write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let ready = Self.repository.appendingPathComponent("Scripts/low-alert.lua")
        try writeFile("Scripts/low-alert.lua", try String(contentsOf: ready, encoding: .utf8))
        let environment = ["WEB_NS_TOKEN": token]
        let serve = try launch(["serve", "--status-port", String(port)], environment: environment)
        defer { serve.terminate() }

        // The alert fires and repeats while nobody acknowledges it.
        let urgent = #""alert_id":"urgent-low""#
        XCTAssertTrue(hook.waitFor("urgent-low notified twice (first and a repeat)", timeout: 90) { requests in
            requests.filter { $0.body.contains(urgent) }.count >= 2
        })

        func linkOf(_ alert: String) throws -> String {
            let body = try XCTUnwrap(hook.requests(containing: #""alert_id":"\#(alert)""#).first { $0.body.contains("ack_url") }?.body,
                                     "a notification of \(alert) with its ack link")
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            return try XCTUnwrap(json["ack_url"] as? String)
        }
        XCTAssertTrue(hook.waitFor("the low alert notified", timeout: 60) { $0.contains { $0.body.contains(#""alert_id":"low""#) } })
        let ackLink = try linkOf("urgent-low"), lowLink = try linkOf("low")

        let login = try lookout(["web", "login"])
        assertExit(login, 0)
        let link = login.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(link.hasPrefix("http://127.0.0.1:\(port)/web/login?code="), link)

        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        print("web view screenshots: \(Self.artifacts.path)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("web_view_browser.py")
        let result = try await PythonVenv.runOffPool(python, [script.path], environment: [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": root,
            "WEB_BASE": "http://127.0.0.1:\(port)", "WEB_LOGIN_URL": link, "WEB_ARTIFACTS": Self.artifacts.path,
            "WEB_EXPECTED_MGDL": "[" + values.map { String(Int($0)) }.joined(separator: ",") + "]",
            "WEB_NS_URL": nsURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")), "WEB_NS_TOKEN": token,
            "WEB_CHROMIUM": chromium, "WEB_ACK_LINK": ackLink, "WEB_LOW_ACK_LINK": lowLink,
        ], timeout: 240, threadName: "web view browser")
        let findings = String(decoding: result.stdout, as: UTF8.self)
        XCTAssertTrue(result.succeeded, "browser checks failed: \(result.summary)\nfindings: \(findings)\nserve:\n\(serve.output())")
        print("web view findings: \(findings)")
        guard result.succeeded else { return }

        // Acknowledged from the page: the repeats stop (three repeat periods without one).
        let acked = hook.requests(containing: urgent).count
        let list = try lookout(["ack", "--list"])
        XCTAssertTrue(list.stdout.contains("anna"), list.stdout)
        let watchUntil = Date().addingTimeInterval(10)
        while Date() < watchUntil {
            XCTAssertEqual(hook.requests(containing: urgent).filter { !$0.body.contains("resolved") }.count,
                           acked, "urgent-low repeated after it was acknowledged from the page")
            if hook.requests(containing: urgent).count != acked { break }
            try await Task.sleep(for: .milliseconds(250))  // watching for an absence, not synchronising
        }
        for name in ["desktop-firing.png", "desktop-acked.png", "phone-acked.png"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: Self.artifacts.appendingPathComponent(name).path), name)
        }
    }
}

extension WebViewBrowserTests {
    /// An hour of readings falling to 50 mg/dL: low for 25 min, urgent low now (below 55).
    static let fallingValues: [Double] = [120, 110, 100, 90, 80, 69, 66, 63, 60, 57, 54, 50]

    /// `values` as sgv entries 5 minutes apart, the last at `end`.
    static func readings(_ values: [Double], until end: Date) -> [JSONValue] {
        values.enumerated().map { i, value in
            let ms = Int64((end.timeIntervalSince1970 - Double(values.count - 1 - i) * 300) * 1000)
            return ["type": "sgv", "sgv": .int(Int64(value)), "date": .int(ms), "direction": "SingleDown", "device": "web-view-test"]
        }
    }

    /// The config of the browser tests: the Nightscout profile `home` (token in `WEB_NS_TOKEN`),
    /// the webhook channel `hook`, and the ready low alert repeating every 3 s, checking every second.
    static func config(nightscout: URL, hook: String) -> String {
        """
        [nightscout.home]
        url = "\(nightscout.absoluteString)"
        token_env = "WEB_NS_TOKEN"

        [notify.hook]
        type = "webhook"
        url = "\(hook)/hook"

        [scripts."low-alert.lua".settings]
        channel = "hook"
        escalate_to = "hook"
        escalate_after = "1h"
        repeat_every = "3s"
        check_every = "1s"
        """
    }
}
