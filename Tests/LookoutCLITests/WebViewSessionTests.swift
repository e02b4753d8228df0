import Foundation
import LookoutSim
import LookoutTestSupport
import XCTest

/// The web view's security model with the real `lookout serve` and raw HTTP (issue 28): reading
/// needs a session from a one-time `lookout web login` code; acting needs the session and its CSRF
/// token, from this origin; `lookout web logout --all` ends sessions; no profile secret reaches a page.
final class WebViewSessionTests: CLITestCase, @unchecked Sendable {
    private static let secret = "this is my long pass phrase"

    private func get(_ port: Int, _ target: String, cookie: String? = nil) throws -> RawHTTP.Answer {
        try RawHTTP.send(port: port, method: "GET", target: target,
                         headers: ["Host: 127.0.0.1:\(port)"] + (cookie.map { ["Cookie: \($0)"] } ?? []))
    }

    private func post(_ port: Int, _ target: String, cookie: String?, body: String, origin: String? = nil) throws -> RawHTTP.Answer {
        var headers = ["Host: 127.0.0.1:\(port)", "Content-Type: application/x-www-form-urlencoded"]
        if let cookie { headers.append("Cookie: \(cookie)") }
        headers.append("Origin: \(origin ?? "http://127.0.0.1:\(port)")")
        return try RawHTTP.send(port: port, method: "POST", target: target, headers: headers, body: body)
    }

    func testSignInOnceActOnlyWithSessionAndTokenAndSignOutEverywhere() async throws {
        let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))
        let nsURL = try await simulator.start()
        defer { Task { await simulator.stop() } }
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        await simulator.seed("treatments", [["eventType": "Correction Bolus", "insulin": 2,
                                             "created_at": .string(iso.string(from: Date().addingTimeInterval(-1800)))]])
        let boat = try SignalKSimulator(options: .init(rate: 1, vesselName: "Web view"))
        let skURL = try await boat.start()
        defer { Task { await boat.stop() } }
        try """
            [nightscout.home]
            url = "\(nsURL.absoluteString)"
            secret_env = "NS_SECRET"

            [signalk.boat]
            url = "\(skURL.absoluteString)"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("Scripts/low.lua", """
            local alert = require "alert"
            local a = alert.define { id = "cli-low", title = "Low", severity = "urgent",
              series = function() return 50, os.time() * 1000 end, when = alert.below(70), clear = alert.above(80) }
            require("schedule").every(1, function() print(a:check()) end)
            """)
        let port = try freePort()
        let serve = try launch(["serve", "--status-port", String(port)], environment: ["NS_SECRET": Self.secret])
        defer { serve.terminate() }
        XCTAssertTrue(serve.waitForOutput(containing: "[low.lua] firing"))

        // Without a session: the sign-in page, nothing of the state.
        let anonymous = try get(port, "/web/")
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertTrue(anonymous.body.contains("lookout web login"), anonymous.body)
        XCTAssertFalse(anonymous.body.contains("cli-low"), anonymous.body)

        // The one-time link: a cookie (HttpOnly, SameSite=Strict), once.
        let login = try lookout(["web", "login"])
        assertExit(login, 0)
        let link = try XCTUnwrap(URLComponents(string: login.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertEqual(link.port, port)
        let target = link.path + "?" + (link.query ?? "")
        let signedIn = try get(port, target)
        XCTAssertEqual(signedIn.status, 303, signedIn.body)
        let setCookie = try XCTUnwrap(signedIn.headers["set-cookie"])
        XCTAssertTrue(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/web"), setCookie)
        let cookie = String(setCookie.split(separator: ";")[0])
        XCTAssertEqual(try get(port, target).status, 403, "a login code works once")
        let code = try XCTUnwrap(link.queryItems?.first { $0.name == "code" }?.value)
        let stored = try String(contentsOfFile: home + "/state/web-sessions.json", encoding: .utf8)
        XCTAssertFalse(stored.contains(code) || stored.contains(String(cookie.split(separator: "=")[1])), "only digests are stored")

        // The page: the alert firing, a CSRF token in its form, a strict policy, no secret.
        let page = try get(port, "/web/", cookie: cookie)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains(#"data-alert="cli-low" data-state="firing""#), page.body)
        XCTAssertTrue(page.body.contains(#"data-script="low.lua" data-state="running""#)
                      || page.body.contains(#"data-script="low.lua" data-state="sleeping""#), page.body)
        XCTAssertTrue(page.headers["content-security-policy"]?.contains("script-src 'self'") == true, "\(page.headers)")
        XCTAssertTrue(page.body.contains("<g class=\"mark bolus\""), "the bolus is marked on the chart")
        XCTAssertTrue(page.body.contains("2 U bolus at "), "the bolus mark says what it was")
        XCTAssertTrue(page.body.contains(#"data-boat="boat""#), "the boat's values are shown")
        let depth = try XCTUnwrap(page.body.range(of: #"data-path="environment.depth.belowTransducer">[0-9.]+ m"#, options: .regularExpression),
                                  "the depth in metres")
        XCTAssertFalse(page.body[depth].isEmpty)
        XCTAssertTrue(page.body.contains(#"data-path="environment.wind.speedApparent">"#) && page.body.contains(" kn"), "wind in knots")
        XCTAssertFalse(page.body.contains(Self.secret), "the profile's secret reached the page")
        XCTAssertFalse(page.body.contains(nsURL.absoluteString), "the page names only the profile, not its site")
        let start = try XCTUnwrap(page.body.range(of: #"name="csrf" value=""#)).upperBound
        let csrf = String(page.body[start...].prefix { $0 != "\"" })
        XCTAssertEqual(csrf.count, 43, csrf)

        // Acting: without the token, with a wrong one, without the session, from another origin: refused.
        XCTAssertEqual(try post(port, "/web/ack/cli-low", cookie: cookie, body: "by=x").status, 403)
        XCTAssertEqual(try post(port, "/web/ack/cli-low", cookie: cookie, body: "csrf=\(csrf)x&by=x").status, 403)
        XCTAssertEqual(try post(port, "/web/ack/cli-low", cookie: nil, body: "csrf=\(csrf)&by=x").status, 401)
        XCTAssertEqual(try post(port, "/web/ack/cli-low", cookie: cookie, body: "csrf=\(csrf)&by=x", origin: "https://evil.example").status, 403)
        let quiet = try lookout(["ack", "--list"])
        XCTAssertFalse(quiet.stdout.contains("acked"), quiet.stdout)

        // With both: acknowledged, by the name given.
        let ack = try post(port, "/web/ack/cli-low", cookie: cookie, body: "csrf=\(csrf)&by=anna")
        XCTAssertEqual(ack.status, 303, ack.body)
        XCTAssertTrue(serve.waitForOutput(containing: "[low.lua] acked"))
        let list = try lookout(["ack", "--list"])
        XCTAssertTrue(list.stdout.contains("anna"), list.stdout)

        // `lookout web logout --all`: the cookie reads nothing more.
        let logout = try lookout(["web", "logout", "--all"])
        assertExit(logout, 0)
        XCTAssertTrue(logout.stdout.contains("ended 1 session"), logout.stdout)
        XCTAssertEqual(try get(port, "/web/", cookie: cookie).status, 401)
    }
}
