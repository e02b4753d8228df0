import Foundation
import LookoutTestSupport
import LookoutWire
import XCTest

@testable import LookoutAutomation
@testable import LookoutModules
@testable import LookoutStore

/// The status server's door (issue 24 §1), over real HTTP with exactly the headers a browser or an
/// attacker sends: forged and DNS-rebinding `Host`s are misdirected, cross-site requests change
/// nothing, and an alert is acknowledged only with its episode's ack link, once, until it expires.
final class StatusDoorTests: XCTestCase {
    /// A status server with the ack routes over a state folder of its own, one urgent alert firing
    /// in episode 1, and a clock the test moves.
    private struct Door {
        let directory: String
        let store: StateStore
        let key: AckLinkKey
        let clock: Locked<Date>
        let server: StatusServer
        let port: Int

        static func start(hosts: [String] = []) async throws -> Door {
            let directory = NSTemporaryDirectory() + "lookout-door-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let store = try StateStore(path: directory + "/lookout.sqlite3")
            let clock = Locked(Date())
            let key = try AckLinkKey.load(stateDirectory: directory)
            let server = StatusServer(
                health: HealthRegistry(),
                extraRoutes: AckRoutes.routes(acks: AlertAcks(store: store), key: { key }, now: { clock.withLock { $0 } }),
                door: StatusDoor(hosts: hosts))
            let port = try await server.start(port: 0)
            let door = Door(directory: directory, store: store, key: key, clock: clock, server: server, port: port)
            try await door.fire(episode: 1)
            return door
        }

        func fire(episode: Int64) async throws {
            let now = Date()
            try await store.saveAlert(
                AlertStatus(id: "urgent-low", script: "low.lua", title: "Urgent low", severity: "urgent", state: "firing",
                            since: now, episode: episode, updatedAt: now), data: "{}", now: now)
        }

        /// The link the host would put in a notification about `episode`, made at `at`.
        func link(episode: Int64 = 1, at: Date? = nil) -> AckLink {
            key.link(alert: "urgent-low", episode: episode, now: at ?? clock.withLock { $0 })
        }

        func send(_ method: String, _ target: String, host: String? = nil, _ headers: [String] = []) throws -> RawHTTP.Answer {
            try RawHTTP.send(port: port, method: method, target: target, headers: ["Host: \(host ?? "127.0.0.1:\(port)")"] + headers)
        }

        func ackedBy() async throws -> String? {
            try await store.alertRecord(id: "urgent-low")?.status.ackedBy
        }

        func stop() async {
            await server.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    func testForgedAndRebindingHostsAreMisdirectedAndDoNotAck() async throws {
        let door = try await Door.start(hosts: ["lookout.example.ts.net"])
        let port = door.port
        let link = door.link().pathAndQuery
        for host in ["evil.example", "evil.example:\(port)", "rebind.attacker.example:\(port)", "127.0.0.1.nip.io:\(port)",
                     "localhost.evil.example", "lookout.example.ts.net.evil.example", "127.0.0.2:\(port)"] {
            let status = try door.send("GET", "/status", host: host)
            XCTAssertEqual(status.status, 421, "GET /status with Host \(host)")
            XCTAssertFalse(status.body.contains("entries"), "the status document leaked to Host \(host)")
            let ack = try door.send("POST", link, host: host)
            XCTAssertEqual(ack.status, 421, "POST with Host \(host): \(ack.body)")
        }
        // No Host at all, and a second Host behind a good one.
        XCTAssertEqual(try RawHTTP.send(port: port, method: "GET", target: "/status", headers: []).status, 421)
        let twice = try door.send("POST", link, ["Host: evil.example"])
        XCTAssertEqual(twice.status, 421, twice.body)
        let acked = try await door.ackedBy()
        XCTAssertNil(acked, "a misdirected request acknowledged the alert")

        for host in ["127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST", "[::1]:\(port)", "localhost.", "lookout.example.ts.net",
                     "Lookout.Example.TS.net:443"] {
            let status = try door.send("GET", "/status", host: host)
            XCTAssertEqual(status.status, 200, "GET /status with Host \(host): \(status.body)")
            XCTAssertEqual(status.headers["cache-control"], "no-store")
        }
        await door.stop()
    }

    func testCrossSiteRequestsNeverAck() async throws {
        let door = try await Door.start()
        let port = door.port
        let link = door.link().pathAndQuery
        let attempts: [(String, [String])] = [
            ("foreign Origin (a web page's no-cors POST)", ["Origin: https://evil.example", "Content-Type: text/plain"]),
            ("Origin null (a sandboxed frame)", ["Origin: null"]),
            ("another local origin", ["Origin: http://localhost:3000"]),
            ("the right name on another port", ["Origin: http://127.0.0.1:\(port + 1)"]),
            ("Sec-Fetch-Site cross-site without Origin", ["Sec-Fetch-Site: cross-site"]),
            ("Sec-Fetch-Site same-site", ["Sec-Fetch-Site: same-site"]),
        ]
        for (what, headers) in attempts {
            let answer = try door.send("POST", link, headers)
            XCTAssertEqual(answer.status, 403, "\(what): \(answer.body)")
        }
        let acked = try await door.ackedBy()
        XCTAssertNil(acked, "a cross-site request acknowledged the alert")
        // Reading stays possible, but no CORS header lets another origin see the answer.
        let read = try door.send("GET", "/status", ["Origin: https://evil.example", "Sec-Fetch-Site: cross-site"])
        XCTAssertEqual(read.status, 200)
        XCTAssertNil(read.headers["access-control-allow-origin"])
        // The confirmation page's own button: same origin.
        let page = try door.send("GET", link)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("<form method=\"post\">"), page.body)
        XCTAssertEqual(page.headers["x-frame-options"], "DENY")
        let stillQuiet = try await door.ackedBy()
        XCTAssertNil(stillQuiet, "GET acknowledged the alert")
        let own = try door.send("POST", link, ["Origin: http://127.0.0.1:\(port)", "Sec-Fetch-Site: same-origin"])
        XCTAssertEqual(own.status, 200, own.body)
        let ackedNow = try await door.ackedBy()
        XCTAssertEqual(ackedNow, "link")
        await door.stop()
    }

    func testAnAckLinkActsOnceForItsEpisodeUntilItExpires() async throws {
        let door = try await Door.start()
        // Without a link, with a made-up or altered token, for another alert: refused.
        let plain = try door.send("POST", "/ack/urgent-low?by=web")
        XCTAssertEqual(plain.status, 403, plain.body)
        XCTAssertTrue(plain.body.contains("lookout ack"), plain.body)
        var forged = door.link()
        forged.token = String(repeating: "A", count: 43)
        XCTAssertEqual(try door.send("POST", forged.pathAndQuery).status, 403)
        var stretched = door.link()
        stretched.expires += 86_400  // a longer life than the token was made for
        XCTAssertEqual(try door.send("POST", stretched.pathAndQuery).status, 403)
        var other = door.link()
        other.alert = "high"
        XCTAssertEqual(try door.send("POST", other.pathAndQuery).status, 403)
        // Expired: made 13 h ago (a link lives 12 h).
        let old = door.link(at: Date().addingTimeInterval(-13 * 3600))
        let expired = try door.send("POST", old.pathAndQuery)
        XCTAssertEqual(expired.status, 403, expired.body)
        XCTAssertTrue(expired.body.contains("expired"), expired.body)
        // Another episode's link (a later one, guessed ahead): refused, nothing acknowledged.
        let ahead = try door.send("POST", door.link(episode: 2).pathAndQuery)
        XCTAssertEqual(ahead.status, 409, ahead.body)
        let nothingYet = try await door.ackedBy()
        XCTAssertNil(nothingYet)

        // The episode's own link: acknowledges it, once.
        let link = door.link()
        let first = try door.send("POST", link.pathAndQuery + "&by=anna")
        XCTAssertEqual(first.status, 200, first.body)
        XCTAssertTrue(first.body.contains(#""acked_by":"anna""#), first.body)
        let again = try door.send("POST", link.pathAndQuery + "&by=mallory")
        XCTAssertEqual(again.status, 409, again.body)
        XCTAssertTrue(again.body.contains("already_acked"), again.body)
        let ackedBy = try await door.ackedBy()
        XCTAssertEqual(ackedBy, "anna")

        // The next episode is not acknowledged by the old link.
        try await door.fire(episode: 2)
        let stale = try door.send("POST", link.pathAndQuery)
        XCTAssertEqual(stale.status, 409, stale.body)
        XCTAssertTrue(stale.body.contains("other_episode"), stale.body)
        let episodeTwo = try await door.ackedBy()
        XCTAssertNil(episodeTwo, "the old link acknowledged the next episode")
        // The clock passing a valid link's expiry.
        let fresh = door.link(episode: 2)
        door.clock.withLock { $0 = $0.addingTimeInterval(AckLink.lifetime + 1) }
        XCTAssertEqual(try door.send("POST", fresh.pathAndQuery).status, 403)

        // The key is private to its owner.
        let mode = try FileManager.default.attributesOfItem(atPath: door.directory + "/" + AckLinkKey.fileName)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        await door.stop()
    }
}
