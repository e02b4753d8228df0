import Foundation
import LookoutSim
import LookoutTestSupport
import XCTest

/// Issue 25 §2: a profile catalogue in the state database instead of config.toml. Profiles are
/// imported from a TOML file (secrets by reference only), listed, used by `run` as if they were
/// in config.toml, and picked up by a running `serve` without a restart: a new site's bound
/// script starts, a changed site's restarts with its new settings, a removed site's stops.
final class ProfileCatalogueTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulators are used from the test's task.
    private let secret = "this is my long pass phrase"

    func testImportedSitesRunAndServeWithoutARestart() async throws {
        var urls: [String] = []
        var simulators: [NightscoutSimulator] = []
        for sgv in [101, 202] {
            let sim = NightscoutSimulator(options: .init(authFailDelay: .zero))
            urls.append(try await sim.start().absoluteString)
            await sim.seed("entries", [["type": "sgv", "sgv": .number(Double(sgv)), "direction": "Flat",
                                        "date": .number(Date().timeIntervalSince1970 * 1000)]])
            simulators.append(sim)
        }
        let started = simulators
        defer { Task { for sim in started { await sim.stop() } } }
        // site0 is in config.toml and in the catalogue: the file's settings are used.
        try """
            [serve.bind]
            "reader.lua" = ["nightscout.site*"]

            [nightscout.site0]
            url = "\(urls[0])"
            secret_env = "NS_SECRET"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["NS_SECRET": secret]

        // Import, list, run.
        try writeFile("sites.toml", """
            [nightscout.siteA]
            url = "\(urls[0])"
            secret_env = "NS_SECRET"

            [nightscout.site0]
            url = "\(urls[1])"
            secret_env = "NS_SECRET"
            """)
        let imported = try lookout(["profiles", "import", "sites.toml"], environment: env)
        assertExit(imported, 0)
        XCTAssertTrue(imported.stdout.contains("imported 2 profile(s)"), imported.stdout)
        let listed = try lookout(["profiles", "list"])
        assertExit(listed, 0)
        XCTAssertTrue(listed.stdout.contains("nightscout.siteA") && listed.stdout.contains(urls[0]), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("(config.toml's is used)"), listed.stdout)
        let run = try lookout(["run", "-e", """
            local c = assert(require("nightscout").client("siteA"))
            print("sgv " .. c:entries { count = 1 }[1].sgv)
            """], environment: env)
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.contains("sgv 101"), "\(run)")

        let repl = try lookout(["repl"], stdin: "print('repl ' .. require('nightscout').client('siteA'):entries{count=1}[1].sgv)\n.reset\n"
            + "print('after reset ' .. require('nightscout').client('siteA'):entries{count=1}[1].sgv)\n", environment: env)
        XCTAssertTrue(repl.stdout.contains("repl 101") && repl.stdout.contains("after reset 101"), "\(repl)")

        // A secret written in the clear is refused and never echoed; nothing is imported.
        try writeFile("bad.toml", "[nightscout.siteC]\nurl = \"\(urls[1])\"\napi_secret = \"hunter2hunter2\"\n")
        let bad = try lookout(["profiles", "import", "bad.toml"])
        assertExit(bad, 2)
        XCTAssertTrue(bad.stderr.contains("bad.toml") && bad.stderr.contains("api_secret"), bad.stderr)
        XCTAssertFalse(bad.stdout.contains("hunter2") || bad.stderr.contains("hunter2"), "\(bad)")
        XCTAssertFalse(try lookout(["profiles", "list"]).stdout.contains("siteC"))

        // serve runs the bound script once per catalogue site and follows the catalogue.
        try writeFile("scripts/reader.lua", """
            local config = require "config"
            local s = config.settings { site = "none" }
            local c = assert(require("nightscout").client(s.site))
            timer.every(0.3, function()
              local e = c:entries { count = 1 }
              if e and e[1] then print(s.site .. " " .. e[1].sgv) end
            end)
            """)
        let serve = try launch(["serve", "--status-port", "0", "--drain", "2s", work + "/scripts"], environment: env)
        let logs = { "\(serve.output(.stdout).suffix(2000))\n\(serve.output(.stderr).suffix(2000))" }
        try await eventually("siteA read by serve", logs: logs) {
            serve.output(.stdout).contains("siteA 101") && serve.output(.stdout).contains("site0 101")
        }
        XCTAssertTrue(serve.output(.stderr).contains("profile nightscout.site0 is in"), serve.output(.stderr))

        try writeFile("more.toml", "[nightscout.siteB]\nurl = \"\(urls[1])\"\nsecret_env = \"NS_SECRET\"\n")
        assertExit(try lookout(["profiles", "import", "more.toml"]), 0)
        try await eventually("a new site starts without a restart", logs: logs) { serve.output(.stdout).contains("siteB 202") }

        // siteA moves to the second server: its work restarts with the new address.
        try writeFile("moved.toml", "[nightscout.siteA]\nurl = \"\(urls[1])\"\nsecret_env = \"NS_SECRET\"\n")
        assertExit(try lookout(["profiles", "import", "moved.toml"]), 0)
        try await eventually("a changed site restarts with its new settings", logs: logs) {
            serve.output(.stderr).contains("reader.lua@siteA: its profile changed; restarting")
                && serve.output(.stdout).contains("siteA 202")
        }

        let removed = try lookout(["profiles", "remove", "nightscout.siteB"])
        assertExit(removed, 0)
        try await eventually("a removed site stops", logs: logs) {
            serve.output(.stderr).contains("reader.lua@siteB: file removed or unbound; stopping it")
        }
        let missing = try lookout(["profiles", "remove", "nightscout.siteB"])
        assertExit(missing, 2)
        XCTAssertTrue(missing.stderr.contains("no profile nightscout.siteB in the catalogue"), missing.stderr)

        serve.send(signal: SIGTERM)
        let ended = try XCTUnwrap(serve.waitForExit(timeout: 30))
        XCTAssertFalse((ended.stdout + ended.stderr).contains(secret), "the secret never shows")
    }
}
