import Foundation
import XCTest

/// The notification queue across a real crash: a `lookout run` process is killed with SIGKILL
/// while a webhook delivery is in flight (the peer holds the request), with another notification
/// waiting for its retry. The restarted process delivers the waiting one once, and leaves the one
/// that was in flight alone while the dead sender's claim holds (no duplicate behind a claim);
/// `lookout outbox` lists it as sending and `lookout outbox retry` delivers it (the one duplicate
/// a crash during that send can cause).
final class NotifyCrashTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testSIGKILLMidDeliveryThenTheRestartedProcessDelivers() throws {
        // "first-msg": 503 the first time, then 200. "held-msg": held the first time, then 200.
        let peer = try HoldingHTTPPeer { request, earlier in
            let before = earlier.filter { $0.body == request.body }.count
            if request.body.contains("held-msg") { return before == 0 ? .hold : .status(200) }
            if request.body.contains("first-msg") { return before == 0 ? .status(503) : .status(200) }
            return .status(200)
        }
        defer { peer.stop() }
        try """
            [notify.hook]
            type = "webhook"
            url = "\(peer.baseURL)/hook"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)

        try writeFile("crash.lua", """
            local notify = require "notify"
            local first = assert(notify.send("hook", { id = "n-first", message = "first-msg" }))
            print("first " .. first.state)
            local held = notify.send("hook", { id = "n-held", message = "held-msg" })
            print("held returned " .. tostring(held and held.state))
            sleep(3600)
            """)
        let crashing = try launch(["run", "crash.lua"])
        XCTAssertTrue(crashing.waitForOutput(containing: "first pending\n", timeout: 60))
        peer.waitFor("the held delivery to arrive") { $0.contains { $0.body.contains("held-msg") } }
        crashing.send(signal: SIGKILL)
        let killed = try XCTUnwrap(crashing.waitForExit(timeout: 30))
        XCTAssertEqual(killed.signal, SIGKILL, "\(killed)")

        // The restarted process: its first notification opens the queue, whose drainer sends
        // what is due (n-first after its retry wait).
        try writeFile("after.lua", """
            local notify = require "notify"
            print("after " .. notify.send("hook", { id = "n-after", message = "after-msg" }).state)
            sleep(3600)
            """)
        let restarted = try launch(["run", "after.lua"])
        XCTAssertTrue(restarted.waitForOutput(containing: "after sent\n", timeout: 60))
        peer.waitFor("the waiting notification to be delivered") { requests in
            requests.filter { $0.body.contains("first-msg") }.count >= 2
        }
        // The peer has the request; wait until the restarted process has stored the outcome.
        var stored = false
        for _ in 0..<200 where !stored {
            stored = try lookout(["outbox", "list", "--state", "sent"]).stdout.contains("n-first ")
        }
        XCTAssertTrue(stored, "n-first stored as sent")
        restarted.send(signal: SIGINT)
        let ended = try XCTUnwrap(restarted.waitForExit(timeout: 30))
        XCTAssertNotNil(ended.signal ?? ended.exitCode, "\(ended)")

        XCTAssertEqual(peer.requests(containing: "first-msg").count, 2, "one 503 before the crash, one delivery after it")
        XCTAssertEqual(peer.requests(containing: "after-msg").count, 1)
        XCTAssertEqual(peer.requests(containing: "held-msg").count, 1, "not sent again while the dead sender's claim holds")

        let list = try lookout(["outbox"])
        assertExit(list, 0)
        let heldRow = list.stdout.split(separator: "\n").first { $0.hasPrefix("n-held ") }.map(String.init) ?? ""
        XCTAssertTrue(heldRow.contains(" sending "), "in flight at the crash:\n\(list.stdout)")
        XCTAssertFalse(list.stdout.contains("n-first"), "delivered, so not listed:\n\(list.stdout)")

        let retry = try lookout(["outbox", "retry", "n-held"])
        assertExit(retry, 0)
        XCTAssertTrue(retry.stdout.contains(" sent "), retry.stdout)
        XCTAssertEqual(peer.requests(containing: "held-msg").count, 2, "the held send, then the retry")
        XCTAssertEqual(peer.requests(containing: "first-msg").count, 2, "nothing sent twice otherwise")
    }
}
