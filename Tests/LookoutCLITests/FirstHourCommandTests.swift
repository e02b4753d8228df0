import Foundation
import LookoutSim
import LookoutTestSupport
import XCTest

/// What a new user meets in the first hour (issue 16, part A): failures that are fast and say
/// what to check, flags and config mistakes named as such, `-v` showing the HTTP exchanges, and
/// help text that wraps as a paragraph.
final class FirstHourCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    private static let nightscout = NightscoutSimulator(options: .init(authFailDelay: .zero))
    private actor Started {
        private var url: URL?
        func url() async throws -> URL {
            if let url { return url }
            let started = try await FirstHourCommandTests.nightscout.start()
            url = started
            return started
        }
    }
    private static let started = Started()

    // MARK: Fast failures

    /// Nightscout, Signal K, Northlight and Garmin clients and doctor against a closed port: each
    /// fails with one attempt (the `-v` lines count the exchanges), and the error names the URL
    /// (never the credential) and says what to check.
    func testEveryClientFailsARefusedConnectionOnceNamingTheURLAndWhatToCheck() throws {
        let port = try freePort()
        let origin = "http://127.0.0.1:\(port)"
        try """
            [nightscout.home]
            url = "\(origin)"
            token_env = "NS_TOKEN"
            [signalk.boat]
            url = "\(origin)"
            [northlight.app]
            url = "\(origin)"
            api_key_env = "NL_KEY"
            [garmin.me]
            url = "\(origin)"
            email = "me@example.org"
            password_env = "GARMIN_PASSWORD"
            garth_home = "\(home)/garth"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let secrets = ["NS_TOKEN": "closedport-token-0123456789", "NL_KEY": "nl_test_closedport0123456789",
                       "GARMIN_PASSWORD": "closedport-password-42"]
        try writeFile("closed.lua", """
            local nightscout, signalk = require "nightscout", require "signalk"
            local feedback, garmin = require "feedback", require "garmin"
            local home = assert(nightscout.client "home")
            local _, e1 = home:latest()
            print("nightscout", e1.code, e1.message)
            local _, e2 = signalk.connect "boat"
            print("signalk", e2.code, e2.message)
            local _, e3 = assert(feedback.client "app"):board()
            print("northlight", e3.code, e3.message)
            local _, e4 = assert(garmin.client "me"):login()
            print("garmin", e4.code, e4.message)
            """)
        let run = try lookout(["run", "-v", "closed.lua"], environment: secrets, timeout: 120)
        assertExit(run, 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, run.description)
        for line in lines {
            XCTAssertTrue(line.contains("connection refused by \(origin): nothing listens there (is the server running, and are host "
                                        + "and port right?)"), line)
        }
        XCTAssertTrue(lines.first?.hasPrefix("nightscout\tnetwork\tGET /api/v3/version: connection refused") ?? false, run.stdout)
        // One attempt per call, no retry cycle: `-v` logs each exchange once.
        let exchanges = run.stderr.split(separator: "\n").filter { $0.contains("failed after") && $0.contains("connection refused") }
        XCTAssertEqual(exchanges.count, 4, run.stderr)
        XCTAssertEqual(exchanges.filter { $0.contains("GET \(origin)/api/v3/version") }.count, 1, run.stderr)
        for secret in secrets.values {
            XCTAssertFalse(run.stdout.contains(secret) || run.stderr.contains(secret), "\(secret) leaked:\n\(run)")
        }

        let doctor = try lookout(["doctor"], environment: secrets, timeout: 120)
        assertExit(doctor, 1)
        let line = doctor.stdout.split(separator: "\n").first { $0.contains(" nightscout.home ") }.map(String.init) ?? doctor.stdout
        XCTAssertTrue(line.contains("connection refused by \(origin): nothing listens there"), doctor.stdout)
    }

    /// Wrong credentials against a site that delays answers after failed logins, as Nightscout
    /// does (5 s more per failure from an address): doctor names the variable holding the wrong
    /// token or secret instead of reporting a transport timeout.
    func testDoctorNamesTheWrongTokenAndSecretDespiteTheSitesLoginDelay() async throws {
        let sim = NightscoutSimulator(options: .init(apiSecret: "the site's own secret phrase"))  // 5 s per failed login
        let url = try await sim.start()
        let token = await sim.addSubject(name: "doctor-ok", roles: ["readable"])
        try """
            [nightscout.good]
            url = "\(url.absoluteString)"
            token_env = "NS_GOOD"
            [nightscout.home]
            url = "\(url.absoluteString)"
            token_env = "NS_TOKEN"
            [nightscout.writer]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["NS_GOOD": token, "NS_TOKEN": "doctor-0000000000000000", "NS_SECRET": "not the site's secret"]
        let run = try lookout(["doctor"], environment: env, timeout: 120)
        assertExit(run, 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        func line(_ subject: String) -> String { lines.first { $0.contains(" \(subject) ") } ?? "(no line for \(subject))" }
        XCTAssertTrue(line("nightscout.good").contains(", read only; no CGM entries"), run.stdout)
        XCTAssertTrue(line("nightscout.home").hasSuffix(": the site refused the token in NS_TOKEN: it is wrong; reads with it are refused too"), run.stdout)
        XCTAssertTrue(line("nightscout.writer").hasSuffix(": the site refused the secret in NS_SECRET: it is wrong; reads with it are refused too"),
                      run.stdout)
        XCTAssertFalse(run.stdout.contains("timed out"), run.stdout)
        for secret in env.values { XCTAssertFalse(run.stdout.contains(secret) || run.stderr.contains(secret), run.description) }
    }

    // MARK: lookout test

    /// README's Signal K example, exactly as printed: it only reacts to the stream (`deltas`,
    /// `boat:on`, no timer), so virtual time must move by itself; the run ends at the scenario's
    /// end. With `--hours 1`, the scenario's expectation (an event at ~3h10) is "not reached",
    /// not a failure.
    func testAStreamOnlyScriptEndsAndAnExpectationBeyondHoursIsNotReached() throws {
        let example = try XCTUnwrap(ReadmeExamples.luaBlock(after: "### Signal K"))
        XCTAssertTrue(example.contains("boat:on("), example)
        try writeFile("readme-boat.lua", example)
        let result = try lookout(["test", "readme-boat.lua", "--scenario", "anchor-drag", "--hours", "1"], timeout: 120)
        assertExit(result, 0)
        XCTAssertTrue(result.stderr.contains("] 0.19438"), "speed over ground in knots\n\(result)")
        XCTAssertTrue(result.stderr.contains("] navigation."), "one navigation delta\n\(result)")
        XCTAssertTrue(result.stdout.contains("NOT REACHED  notify \"anchor-drag\""), result.stdout)
        XCTAssertTrue(result.stdout.contains("not reached: the event is at +03:"), result.stdout)
        XCTAssertTrue(result.stdout.contains("ok: 0 expectations held, 1 not reached in this run"), result.stdout)
        XCTAssertFalse(result.stdout.contains("FAIL"), result.stdout)
    }

    // MARK: Flags

    func testAnOptionBeforeTheScriptIsUnknownAndAMissingFileSaysSo() throws {
        try writeFile("x.lua", "print('should not run')")
        let bogus = try lookout(["run", "--bogus", "x.lua"])
        assertExit(bogus, 2)
        XCTAssertTrue(bogus.stderr.contains("unknown option '--bogus'"), bogus.description)
        XCTAssertFalse(bogus.stderr.contains("cannot read"), bogus.description)
        XCTAssertEqual(bogus.stdout, "")

        let missing = try lookout(["run", "nope.lua"])
        assertExit(missing, 2)
        XCTAssertTrue(missing.stderr.contains("cannot read nope.lua: no such file"), missing.description)
        let folder = try lookout(["run", "."])
        assertExit(folder, 2)
        XCTAssertTrue(folder.stderr.contains("cannot read .: it is a folder"), folder.description)
    }

    /// `-v` shows each HTTP exchange (method, URL without secrets, status), never a credential.
    func testVerboseShowsHTTPExchangesWithoutSecrets() async throws {
        let url = try await Self.started.url()
        let token = await Self.nightscout.addSubject(name: "verbose-\(UUID().uuidString.prefix(8))", roles: ["readable"])
        try """
            [nightscout.home]
            url = "\(url.absoluteString)"
            token_env = "NS_TOKEN"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("read.lua", """
            local home = assert(require("nightscout").client "home")
            print(#assert(home:entries { count = 1 }))
            """)
        let quiet = try lookout(["run", "read.lua"], environment: ["NS_TOKEN": token])
        assertExit(quiet, 0)
        XCTAssertFalse(quiet.stderr.contains("GET "), quiet.description)
        let run = try lookout(["run", "-v", "read.lua"], environment: ["NS_TOKEN": token])
        assertExit(run, 0)
        XCTAssertTrue(run.stderr.contains("GET \(url.absoluteString)/api/v3/version → 200 in "), run.stderr)
        XCTAssertTrue(run.stderr.contains("GET \(url.absoluteString)/api/v2/authorization/request/<redacted> → 200 in "), run.stderr)
        XCTAssertTrue(run.stderr.contains("GET \(url.absoluteString)/api/v3/entries → 200 in "), run.stderr)
        XCTAssertFalse(run.stderr.contains(token), run.stderr)
    }

    /// The discussion of `sim …` and `demo` is one paragraph, wrapped at the width by the
    /// argument parser: no line ends where the next line's first word would still have fitted.
    func testHelpOfSimAndDemoWrapsAsAParagraph() throws {
        for command in [["sim", "nightscout"], ["sim", "signalk"], ["sim", "northlight"], ["sim", "garmin"], ["demo"]] {
            let help = try lookout(command + ["--help"])
            assertExit(help, 0)
            let lines = help.stdout.components(separatedBy: "\n")
            guard let end = lines.firstIndex(where: { $0.hasPrefix("USAGE:") }) else {
                XCTFail("no USAGE in \(help.stdout)")
                continue
            }
            let discussion = Array(lines[1..<end])
            for (line, next) in zip(discussion, discussion.dropFirst()) where !line.isEmpty && !next.isEmpty {
                let word = next.split(separator: " ").first.map(String.init) ?? ""
                XCTAssertGreaterThan(line.count + 1 + word.count, 80,
                                     "`lookout \(command.joined(separator: " ")) --help` breaks a sentence early:\n\(line)\n\(next)")
            }
        }
    }

    // MARK: Config

    /// `[limits] memory` below the minimum, and service profiles, are refused at start-up with
    /// file, line, key and what to write instead (exit 2), before any script runs.
    func testConfigMistakesAreRefusedAtStartWithFileLineAndKey() throws {
        try writeFile("ok.lua", "print('should not run')")
        let cases: [(String, String)] = [
            ("[limits]\nmemory = 64\n",
             "config.toml:2:10: limits.memory: 64 bytes is too little for a script (the minimum is 1MB)"),
            ("[limits]\nmemory = \"100KB\"\n",
             "config.toml:2:10: limits.memory: 102400 bytes is too little for a script (the minimum is 1MB)"),
            ("[nightscout.home]\nurl = \"https://ns.example.org\"\ntimout = \"30s\"\n",
             "config.toml:3:1: nightscout.home.timout: unknown key timout in [nightscout.home]; did you mean timeout?"),
            ("[nightscout.home]\nurl = 42\n",
             "config.toml:2:7: nightscout.home.url: expected the address as a string such as \"https://ns.example.org\", got an integer"),
            ("[nightscout.home]\nurl = \"ns.example.org\"\n",
             "config.toml:2:7: nightscout.home.url: expected a URL starting with http:// or https://, such as \"https://ns.example.org\"; "
                + "got \"ns.example.org\""),
            ("[nightscout.home]\nurl = \"https://ns.example.org/?token=reader-0123456789abcdef\"\n",
             "config.toml:2:7: nightscout.home.url: the URL carries a credential (?token=…), which the config must not hold"),
            ("[signalk.boat]\nurl = \"boat.local:3000\"\n",
             "config.toml:2:7: signalk.boat.url: expected a URL starting with http:// or https:// or ws:// or wss://"),
            ("[nightscout.home]\nurl = \"https://ns.example.org\"\ntokn_env = \"NS_TOKEN\"\n",
             "config.toml:3:1: nightscout.home.tokn_env: unknown secret tokn_env in [nightscout.home]; did you mean token_env?"),
        ]
        for (config, expected) in cases {
            try config.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
            let result = try lookout(["run", "ok.lua"])
            assertExit(result, 2)
            XCTAssertTrue(result.stderr.contains(expected), "\(config)\n\(result)")
            XCTAssertFalse(result.stderr.contains("reader-0123456789abcdef"), result.description)
            XCTAssertEqual(result.stdout, "")
        }
        for config in ["[limits]\nmemory = 0\n", "[limits]\nmemory = \"none\"\n", "[limits]\nmemory = \"2MB\"\n"] {
            try config.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
            let result = try runScript("print('ran')")
            assertExit(result, 0)
            XCTAssertEqual(result.stdout, "ran\n", "\(config)\n\(result)")
        }
        let flag = try lookout(["run", "--memory-limit", "64", "ok.lua"])
        assertExit(flag, 2)
        XCTAssertTrue(flag.stderr.contains("--memory-limit: 64 bytes is too little for a script (the minimum is 1MB)"), flag.description)
    }
}
