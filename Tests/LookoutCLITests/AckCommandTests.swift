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
