import Foundation
import XCTest

/// `lookout ack`: acknowledging an alert a script defined, from another process.
final class AckCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testAckFromTheShellMutesTheAlertUntilItsEpisodeEnds() throws {
        try "[notify.phone]\ntype = \"log\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("low.lua", """
            local alert = require "alert"
            local low = alert.define {
              id = "urgent-low", title = "Urgent low", severity = "urgent", notify = { "phone" },
              series = function() return tonumber(arg[1]), os.time() * 1000 end,
              when = alert.below(55), clear = alert.above(70),
            }
            print(low:check())
            """)
        let unknown = try lookout(["ack", "urgent-low"])
        assertExit(unknown, 2)
        XCTAssertTrue(unknown.stderr.contains("no alert 'urgent-low'"), unknown.stderr)

        let fire = try lookout(["run", "low.lua", "40"])
        assertExit(fire, 0)
        XCTAssertEqual(fire.stdout, "firing\n")

        let ack = try lookout(["ack", "urgent-low", "--by", "anna"])
        assertExit(ack, 0)
        XCTAssertEqual(ack.stdout, "acknowledged urgent-low (episode 1) by anna\n")

        let muted = try lookout(["run", "low.lua", "45"])
        XCTAssertEqual(muted.stdout, "acked\n")
        let list = try lookout(["ack", "--list"])
        assertExit(list, 0)
        XCTAssertTrue(list.stdout.contains("urgent-low  acked  urgent"), list.stdout)
        XCTAssertTrue(list.stdout.contains("anna"), list.stdout)

        let clear = try lookout(["run", "low.lua", "90"])
        XCTAssertEqual(clear.stdout, "ok\n")
        let quiet = try lookout(["ack", "urgent-low"])
        assertExit(quiet, 2)
        XCTAssertTrue(quiet.stderr.contains("is not firing (state: ok)"), quiet.stderr)

        let outbox = try lookout(["outbox", "list", "--all"])
        assertExit(outbox, 0)
        XCTAssertTrue(outbox.stdout.contains("notifications:"), outbox.stdout)
        XCTAssertTrue(outbox.stdout.contains("alert:urgent-low:1:1:phone"), outbox.stdout)
    }
}

/// `lookout outbox` with notifications: listed with uploads, retried, dropped; no secret shown.
final class NotifyOutboxCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testUndeliveredNotificationIsListedRetriedAndDropped() throws {
        try """
            [notify.hook]
            type = "webhook"
            url = "http://127.0.0.1:9/hook"
            token_env = "HOOK_TOKEN"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["HOOK_TOKEN": "hook-SECRET-value"]
        let send = try runScriptWith(env, """
            local item = assert(require("notify").send("hook", { title = "Boat", message = "anchor drag", id = "cli-note-1" }))
            print(item.state)
            """)
        assertExit(send, 0)
        XCTAssertEqual(send.stdout, "pending\n")

        let list = try lookout(["outbox"], environment: env)
        assertExit(list, 0)
        XCTAssertTrue(list.stdout.contains("notifications:"), list.stdout)
        XCTAssertTrue(list.stdout.contains("cli-note-1  pending  1      hook"), list.stdout)
        XCTAssertFalse(list.stdout.contains("SECRET"), list.stdout)

        let retry = try lookout(["outbox", "retry", "cli-note-1"], environment: env)
        assertExit(retry, 0)
        XCTAssertTrue(retry.stdout.contains("cli-note-1  pending  2"), retry.stdout)

        let drop = try lookout(["outbox", "drop", "cli-note-1"], environment: env)
        assertExit(drop, 0)
        XCTAssertEqual(drop.stdout, "dropped cli-note-1\n")
        let after = try lookout(["outbox"], environment: env)
        XCTAssertFalse(after.stdout.contains("cli-note-1"), after.stdout)
    }

    private func runScriptWith(_ env: [String: String], _ source: String) throws -> ProcessResult {
        try writeFile("send.lua", source)
        return try lookout(["run", "send.lua"], environment: env)
    }
}
