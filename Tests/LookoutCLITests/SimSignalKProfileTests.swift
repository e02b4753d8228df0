import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `lookout sim signalk` prints a profile to paste that works as printed, `--state` keeps its URL
/// and the tokens Lookout stored, and the REPL shows a bare `boat:get` number in its display
/// units (issue 30), through the real binary against the simulator it starts.
final class SimSignalKProfileTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    /// Starts `lookout sim signalk …`, writes the profile it prints to config.toml and returns the
    /// process and its output up to "serving until Ctrl-C".
    private func startSim(_ arguments: [String]) throws -> (ChildProcess, String) {
        let sim = try launch(["sim", "signalk"] + arguments)
        XCTAssertTrue(sim.waitForOutput(containing: "serving until Ctrl-C", timeout: 60), sim.output())
        let out = sim.output()
        let profile = try XCTUnwrap(out.components(separatedBy: "config profile (paste into config.toml):\n").last, out)
            .components(separatedBy: "serving until").first ?? ""
        try profile.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return (sim, out)
    }

    private func stop(_ sim: ChildProcess) {
        sim.send(signal: SIGTERM)
        _ = sim.waitForExit(timeout: 30)
    }

    func testThePrintedProfileWorksAndTheReplShowsBareValuesInDisplayUnits() throws {
        let (sim, out) = try startSim(["--rate", "10"])
        defer { stop(sim) }
        XCTAssertTrue(out.contains("[signalk.sim]\nurl = \"http://127.0.0.1:"), out)
        let lines = """
            signalk = require "signalk"
            boat = assert(signalk.connect "sim")
            boat:get "navigation.speedOverGround"
            boat:get "navigation.headingTrue"
            boat:get "environment.water.temperature"
            boat:get "electrical.batteries.house.voltage"
            x = boat:get "navigation.speedOverGround"; y = 1
            2 * x
            """
        let repl = try lookout(["repl"], stdin: lines + "\n")
        assertExit(repl, 0)
        let shown = repl.stdout
        for pattern in [#"(?m)^[0-9.]+ --\[\[ [0-9]+\.[0-9] kn \(m/s\) \]\]$"#,
                        #"(?m)^-?[0-9.]+ --\[\[ -?[0-9]+\.[0-9]° \(rad\) \]\]$"#,
                        #"(?m)^[0-9.]+ --\[\[ [0-9]+\.[0-9] °C \(K\) \]\]$"#,
                        #"(?m)^[0-9.]+ --\[\[ [0-9]+\.[0-9]{2} V \]\]$"#] {
            XCTAssertNotNil(shown.range(of: pattern, options: .regularExpression), pattern + "\n" + repl.description)
        }
        // Only the number the line's own get returned is annotated: arithmetic on it is not.
        XCTAssertEqual(shown.components(separatedBy: " --[[ ").count - 1, 4, repl.description)
    }

    /// With --security the profile asks for a token itself (`access`): the first run waits, the
    /// simulator prints the approve command, the person runs it, the run goes on. With --state the
    /// restarted simulator has the same URL and still accepts the token Lookout stored: the second
    /// run needs no new approval.
    func testTheSecuredProfileAsksForAccessAndStateKeepsURLAndTokens() throws {
        let state = root + "/sk-state"
        try writeFile("read.lua", """
            local signalk = require "signalk"
            local boat <close> = assert(signalk.connect "sim")
            print("sog", math.type(assert(boat:get "navigation.speedOverGround")) ~= nil)
            """)
        let (sim, first) = try startSim(["--security", "--user", "admin:s3cret-pw", "--state", state])
        XCTAssertTrue(first.contains("access = {description = \"Lookout\", wait = \"5m\"}"), first)
        let run = try launch(["run", "read.lua"])
        XCTAssertTrue(sim.waitForOutput(containing: "  approve: lookout sim signalk approve ", timeout: 60), run.output(.stderr))
        let hint = try XCTUnwrap(sim.output().split(separator: "\n").first { $0.hasPrefix("  approve: ") }, sim.output())
        var words = hint.split(separator: " ").map(String.init).drop { $0 != "sim" }.map { $0 }
        words = words.map { $0 == "admin:PASSWORD" ? "admin:s3cret-pw" : $0 }
        let approve = try lookout(words)
        assertExit(approve, 0)
        let done = try XCTUnwrap(run.waitForExit(timeout: 60))
        assertExit(done, 0)
        XCTAssertEqual(done.stdout, "sog\ttrue\n", done.description)
        XCTAssertFalse(sim.output().contains("eyJ"), "no token on screen")
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: state + "/signalk.json")[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o077, 0)
        stop(sim)

        let (again, second) = try startSim(["--security", "--user", "admin:s3cret-pw", "--state", state])
        defer { stop(again) }
        func url(_ text: String) -> String? { text.split(separator: "\n").first { $0.hasPrefix("url = ") }.map(String.init) }
        XCTAssertEqual(url(second), url(first), second)
        // A token the restarted simulator refused would make the run ask for access again and wait.
        let rerun = try lookout(["run", "read.lua"], timeout: 30)
        assertExit(rerun, 0)
        XCTAssertEqual(rerun.stdout, "sog\ttrue\n", rerun.description)
        XCTAssertFalse(again.output().contains("access request from"), again.output())
    }
}
