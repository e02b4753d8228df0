import Foundation
import LookoutTestSupport
import XCTest

/// `lookout demo`: the README's first command, run briefly without a terminal.
final class DemoCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testDemoRunsTheStoryAndTheBridges() throws {
        let run = try lookout(["demo", "--plain", "--duration", "6", "--step", "1"])
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.contains("BG "), run.stdout)
        XCTAssertTrue(run.stdout.contains("demo stopped:"), run.stdout)
        // The Nightscout → Signal K bridge reached the Signal K simulator and said so.
        XCTAssertTrue(run.stderr.contains("nightscout-to-signalk.lua: notification:"), run.stderr)
        XCTAssertFalse(run.stderr.contains("error"), run.stderr)
    }

    /// The boat's own readings in the display units the Signal K simulator serves with each
    /// path's meta (knots, degrees, metres, °C), not as SI numbers (issue 30).
    func testTheDemoShowsTheBoatInDisplayUnits() throws {
        let run = try lookout(["demo", "--plain", "--duration", "4", "--step", "1"])
        assertExit(run, 0)
        let boat = run.stdout.split(separator: "\n").filter { $0.hasPrefix("Boat: ") }
        XCTAssertFalse(boat.isEmpty, run.stdout)
        let pattern = #"^Boat: SOG \d+\.\d kn, COG -?\d+\.\d°, wind \d+\.\d kn, from -?\d+\.\d°, depth \d+\.\d m, water -?\d+\.\d °C$"#
        for line in boat { XCTAssertNotNil(line.range(of: pattern, options: .regularExpression), String(line)) }
    }

    /// What the demo shows is told the way people read it: BG with its unit, the other unit in
    /// parentheses and the arrow; alert texts in story time (each reading stands for 5 minutes,
    /// so a repeat says "for 5 min", never "for 3s"); the heavy-weather note at the bridge's own
    /// 20-knot threshold.
    func testTheStoryIsToldInStoryTimeUnitsAndArrows() throws {
        let run = try lookout(["demo", "--plain", "--duration", "40", "--step", "1"], timeout: 120)
        assertExit(run, 0)
        let bgLines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("BG ") }
        XCTAssertFalse(bgLines.isEmpty, run.stdout)
        for line in bgLines {
            XCTAssertTrue(line.contains(" mg/dL (") && line.contains(" mmol/L)"), String(line))
            XCTAssertTrue(["↑↑", "↑", "↗", "→", "↘", "↓", "↓↓"].contains { line.contains(" \($0);") }, String(line))
        }
        XCTAssertTrue(bgLines.first?.contains("→") ?? false, "the story opens level: \(bgLines.first ?? "")")
        // The urgent low repeats in story time.
        XCTAssertTrue(run.stderr.contains("Urgent low: "), run.stderr)
        // In minutes of story time: one reading (5 min) per real second, so a check that runs a
        // little late says "for 9 min" instead of "for 5 min"; either is story time.
        XCTAssertNotNil(run.stderr.range(of: #"\((still, for|not acknowledged for) \d+ min\)"#, options: .regularExpression), run.stderr)
        XCTAssertNil(run.stderr.range(of: #"for \d+ ?s\)"#, options: .regularExpression), run.stderr)
        // The squall is noted at the script's threshold.
        let note = try XCTUnwrap(run.stderr.range(of: #"Heavy weather on board: wind (\d+) kn"#, options: .regularExpression), run.stderr)
        let knots = Int(run.stderr[note].split(separator: " ")[5]) ?? 0
        XCTAssertGreaterThanOrEqual(knots, 20, String(run.stderr[note]))
    }

    /// `lookout ack urgent-low` from another terminal, as the demo's hint says, stops the urgent
    /// low's repeats: the acknowledgement is stamped in the demo's story time, so it does not
    /// look old to the alert (an urgent acknowledgement expires after 30 story minutes, six
    /// readings here), and the alert stays acknowledged while the low goes on.
    func testAcknowledgingInTheDemoStopsTheRepeats() throws {
        let demo = try launch(["demo", "--plain", "--step", "1"])
        XCTAssertTrue(demo.waitForOutput(.stderr, containing: "Urgent low: ", timeout: 90))
        XCTAssertTrue(demo.waitForOutput(containing: "lookout ack urgent-low", timeout: 30))
        let hint = try XCTUnwrap(demo.output().range(of: #"LOOKOUT_HOME=\S+"#, options: .regularExpression), demo.output())
        let demoHome = String(demo.output()[hint].dropFirst("LOOKOUT_HOME=".count))

        let ack = try lookout(["ack", "urgent-low", "--by", "anna"], environment: ["LOOKOUT_HOME": demoHome])
        assertExit(ack, 0)
        // From the first reading the alert shows acknowledged (the script's next check), four more
        // readings (20 story minutes, within the urgent acknowledgement's 30; stamped in real time,
        // it would have looked 20 minutes old already and expired within two) while the low goes
        // on: acknowledged all along, and no repeat.
        assertAckedWithoutRepeats(demo, by: "anna")
    }

    /// The demo's web view (issue 28): the link it prints signs in once, the page shows the urgent
    /// low firing with its Acknowledge form, and acknowledging there (session + CSRF token) stops
    /// the repeats, as `lookout ack` does.
    func testAcknowledgingFromTheDemosWebViewStopsTheRepeats() throws {
        let demo = try launch(["demo", "--plain", "--step", "1"])
        XCTAssertTrue(demo.waitForOutput(containing: "web view: http://127.0.0.1:", timeout: 30))
        let printed = try XCTUnwrap(demo.output().range(of: #"http://127\.0\.0\.1:\d+/web/login\?code=\S+"#, options: .regularExpression))
        let link = try XCTUnwrap(URLComponents(string: String(demo.output()[printed])))
        let port = try XCTUnwrap(link.port)
        let signIn = try RawHTTP.send(port: port, method: "GET", target: link.path + "?" + (link.query ?? ""),
                                      headers: ["Host: 127.0.0.1:\(port)"])
        XCTAssertEqual(signIn.status, 303, signIn.body)
        let cookie = String(try XCTUnwrap(signIn.headers["set-cookie"]).split(separator: ";")[0])

        XCTAssertTrue(demo.waitForOutput(.stderr, containing: "Urgent low: ", timeout: 90))
        let page = try RawHTTP.send(port: port, method: "GET", target: "/web/", headers: ["Host: 127.0.0.1:\(port)", "Cookie: \(cookie)"])
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains(#"data-alert="urgent-low" data-state="firing""#), page.body)
        XCTAssertTrue(page.body.contains("<circle class=\"pt"), "the chart shows the story's readings")
        // The scripts' latest lines: the bridge logs what it sends the boat.
        XCTAssertTrue(page.body.range(of: #"<pre class="log"[^>]*><span>[0-9:]+ info +nightscout-to-signalk\.lua: "#,
                                      options: .regularExpression) != nil, page.body)
        let start = try XCTUnwrap(page.body.range(of: #"action="/web/ack/urgent-low" class="ack"><input type="hidden" name="csrf" value=""#))
        let csrf = String(page.body[start.upperBound...].prefix { $0 != "\"" })
        let ack = try RawHTTP.send(port: port, method: "POST", target: "/web/ack/urgent-low",
                                   headers: ["Host: 127.0.0.1:\(port)", "Cookie: \(cookie)", "Origin: http://127.0.0.1:\(port)",
                                             "Content-Type: application/x-www-form-urlencoded"], body: "csrf=\(csrf)&by=anna")
        XCTAssertEqual(ack.status, 303, ack.body)

        assertAckedWithoutRepeats(demo, by: "anna")
    }

    /// The demo shows urgent-low acknowledged by `by` for four readings while the low goes on, with
    /// no repeat of it; then stops it.
    private func assertAckedWithoutRepeats(_ demo: ChildProcess, by: String, file: StaticString = #filePath, line: UInt = #line) {
        let acked = "urgent-low ACKED"
        XCTAssertTrue(demo.waitForOutput(containing: acked, timeout: 30), file: file, line: line)
        let stdoutMark = demo.output().utf8.count, stderrMark = demo.output(.stderr).utf8.count
        XCTAssertTrue(demo.waitForOutput(after: stdoutMark, timeout: 60, "four readings after the acknowledgement", file: file, line: line,
                                         until: { $0.split(separator: "\n").filter { $0.hasPrefix("BG ") }.count >= 4 }),
                      file: file, line: line)
        let lines = String(decoding: demo.output().utf8.dropFirst(stdoutMark), as: UTF8.self).split(separator: "\n")
        for reading in lines.filter({ $0.hasPrefix("BG ") }).prefix(4) {
            XCTAssertTrue(reading.contains(acked) && reading.contains("(acknowledged by \(by))"), "\(reading)\n\(demo.output())",
                          file: file, line: line)
        }
        let after = String(decoding: demo.output(.stderr).utf8.dropFirst(stderrMark), as: UTF8.self)
        XCTAssertFalse(after.contains("Urgent low: "), after, file: file, line: line)
        demo.send(signal: SIGINT)
        XCTAssertNotNil(demo.waitForExit(timeout: 30), file: file, line: line)
    }

    /// A `lookout` outside any checkout (as a package installs it) runs the demo from any folder:
    /// the ready scripts it needs ship inside the binary.
    func testTheDemoRunsFromAnyFolderWithTheScriptsInTheBinary() throws {
        let copy = root + "/bin/lookout"
        try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try LookoutBinary.require(), toPath: copy)
        let demo = try ChildProcess.spawn(executable: copy, arguments: ["demo", "--plain", "--duration", "4", "--step", "1"],
                                          environment: environment(), directory: work, streams: .pipes)
        demo.closeInput()
        let run = try XCTUnwrap(demo.waitForExit(timeout: 60))
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.contains("BG "), run.stdout)
        XCTAssertFalse(run.stdout.contains("not found") || run.stderr.contains("cannot find"), run.description)
        XCTAssertTrue(run.stderr.contains("nightscout-to-signalk.lua: notification:"), run.stderr)
    }

    func testBadOptionsAreUsageErrors() throws {
        let run = try lookout(["demo", "--step", "0"])
        assertExit(run, 2)
        XCTAssertTrue(run.stderr.contains("--step takes 1 to 300 seconds"), run.stderr)
    }
}
