import Foundation
import LookoutTestSupport
import XCTest

/// The door of `lookout serve`'s status server end to end (issue 24 §1): the real binary, a
/// webhook receiver standing in for the phone, and raw HTTP with the headers an attacker sends.
final class ServeDoorTests: CLITestCase, @unchecked Sendable {
    /// An urgent alert whose value is written into the script (the test rewrites the file; serve
    /// reloads it and the alert's state carries over in the state database).
    private func lowScript(value: Int) -> String {
        """
        local alert = require "alert"
        local VALUE = \(value)
        local a = alert.define { id = "cli-low", title = "Low", severity = "urgent",
          series = function() return VALUE, os.time() * 1000 end, when = alert.below(70), clear = alert.above(80),
          notify = { "hook" } }
        require("schedule").every(1, function() print(a:check()) end)
        """
    }

    /// The served script that tries its own host's status port by every loopback spelling.
    private func probeScript(port: Int) -> String {
        """
        local http = require "http"
        for _, host in ipairs { "127.0.0.1", "localhost", "LOCALHOST.", "127.1", "0x7f.0.0.1", "2130706433", "0.0.0.0",
                                "[::1]", "[::ffff:127.0.0.1]", "127.0.0.1.", "sub.localhost" } do
          local r, err = http.post("http://" .. host .. ":\(port)/ack/cli-low?by=script", "")
          print("probe " .. host .. " " .. (r and tostring(r.status) or err.code) .. (err and " | " .. err.message or ""))
        end
        require("schedule").every(3600, function() end)  -- stays running: probes once
        """
    }

    private func configure(hook: HoldingHTTPPeer) throws {
        try """
            [notify.hook]
            type = "webhook"
            url = "\(hook.baseURL)/hook"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
    }

    /// The `ack_url` of the first webhook delivery about `episode`.
    private func ackLink(_ hook: HoldingHTTPPeer, episode: Int) throws -> URL {
        hook.waitFor("a notification with an ack link for episode \(episode)") { requests in
            requests.contains { $0.body.contains(#""episode":\#(episode)"#) && $0.body.contains("ack_url") }
        }
        let body = try XCTUnwrap(hook.requests(containing: #""episode":\#(episode)"#).first?.body)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        return try XCTUnwrap(URL(string: try XCTUnwrap(json["ack_url"] as? String)))
    }

    private func post(_ link: URL, host: String? = nil, _ headers: [String] = []) throws -> RawHTTP.Answer {
        let target = link.path + "?" + (link.query ?? "")
        return try RawHTTP.send(port: link.port ?? 80, method: "POST", target: target,
                                headers: ["Host: \(host ?? "127.0.0.1:\(link.port ?? 80)")"] + headers)
    }

    func testTheLinkFromASentNotificationAcksItsEpisodeOnceAndNothingElseDoes() throws {
        let hook = try HoldingHTTPPeer { _, _ in .status(200) }
        defer { hook.stop() }
        try configure(hook: hook)
        let port = try freePort()
        try writeFile("Scripts/low.lua", lowScript(value: 50))
        try writeFile("Scripts/probe.lua", probeScript(port: port))
        let serve = try launch(["serve", "--status-port", String(port)])
        XCTAssertTrue(serve.waitForOutput(containing: "[low.lua] firing"))

        // A script cannot reach the status port, however it spells loopback.
        XCTAssertTrue(serve.waitForOutput(containing: "[probe.lua] probe sub.localhost"))
        let probes = serve.output().split(separator: "\n").filter { $0.hasPrefix("[probe.lua] probe ") }
        XCTAssertEqual(probes.count, 11, serve.output())
        for line in probes {
            XCTAssertTrue(line.contains(" refused | ") && line.contains("status server"), String(line))
        }

        let link = try ackLink(hook, episode: 1)
        XCTAssertEqual(link.port, port)
        XCTAssertEqual(link.path, "/ack/cli-low")
        // Forged Host, DNS rebinding, a web page's no-cors POST, a cross-site fetch: refused.
        XCTAssertEqual(try post(link, host: "evil.example").status, 421)
        XCTAssertEqual(try post(link, host: "rebind.attacker.example:\(port)").status, 421)
        XCTAssertEqual(try post(link, ["Origin: https://evil.example", "Content-Type: text/plain"]).status, 403)
        XCTAssertEqual(try post(link, ["Sec-Fetch-Site: cross-site"]).status, 403)
        // Without the link's token: refused.
        let bare = try RawHTTP.send(port: port, method: "POST", target: "/ack/cli-low", headers: ["Host: 127.0.0.1:\(port)"])
        XCTAssertEqual(bare.status, 403, bare.body)
        let quiet = try lookout(["ack", "--list"])
        XCTAssertFalse(quiet.stdout.contains("acked"), quiet.stdout)
        XCTAssertFalse(quiet.stdout.contains("script"), quiet.stdout)

        // The link: acknowledges episode 1, once.
        let first = try post(link)
        XCTAssertEqual(first.status, 200, first.body)
        XCTAssertTrue(first.body.contains(#""episode":1"#), first.body)
        XCTAssertEqual(try post(link).status, 409)
        XCTAssertTrue(serve.waitForOutput(containing: "[low.lua] acked"))

        // The alert clears and fires again: episode 2 gets its own link, the old one acts no more.
        let mark = serve.outputCount
        try writeFile("Scripts/low.lua", lowScript(value: 100))
        XCTAssertTrue(serve.waitForOutput(after: mark, containing: "[low.lua] ok"))
        let refire = serve.outputCount
        try writeFile("Scripts/low.lua", lowScript(value: 50))
        let second = try ackLink(hook, episode: 2)
        XCTAssertTrue(serve.waitForOutput(after: refire, containing: "[low.lua] firing"))  // episode 2 saved
        XCTAssertNotEqual(second, link)
        let stale = try post(link)
        XCTAssertEqual(stale.status, 409, stale.body)
        XCTAssertTrue(stale.body.contains("other_episode"), stale.body)
        let list = try lookout(["ack", "--list"])
        XCTAssertTrue(list.stdout.contains("firing"), list.stdout)
        XCTAssertEqual(try post(second).status, 200)

        // `lookout status --url` with the server's address alone.
        let status = try lookout(["status", "--url", "http://127.0.0.1:\(port)"])
        XCTAssertTrue(status.stdout.contains("low.lua"), "\(status)")
        serve.terminate()
    }

    func testIsolatedWorkersCannotReachTheStatusPortAndLinkToIt() throws {
        let hook = try HoldingHTTPPeer { _, _ in .status(200) }
        defer { hook.stop() }
        try configure(hook: hook)
        let port = try freePort()
        try writeFile("Scripts/low.lua", lowScript(value: 50))
        try writeFile("Scripts/probe.lua", probeScript(port: port))
        let serve = try launch(["serve", "--isolate", "--status-port", String(port)])
        XCTAssertTrue(serve.waitForOutput(containing: "[probe.lua] probe sub.localhost", timeout: 60))
        let probes = serve.output().split(separator: "\n").filter { $0.hasPrefix("[probe.lua] probe ") }
        XCTAssertEqual(probes.count, 11, serve.output())
        XCTAssertTrue(probes.allSatisfy { $0.contains(" refused | ") }, probes.joined(separator: "\n"))
        let link = try ackLink(hook, episode: 1)
        XCTAssertEqual(link.port, port)
        XCTAssertEqual(try post(link).status, 200)
        serve.terminate()
    }
}
