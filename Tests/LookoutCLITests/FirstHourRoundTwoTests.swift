import Foundation
import LookoutSim
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// What a new user still trips over in the first hour (issue 30, round 2), through the real
/// `lookout` binary against the simulators.
final class FirstHourRoundTwoTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One Northlight simulator for the process (stopping a server while connections arrive can trap in NIO).
    private static let northlight = NorthlightSimulator()
    private actor Started {
        private var url: URL?
        func url(of sim: NorthlightSimulator) async throws -> URL {
            if let url { return url }
            let started = try await sim.start()
            url = started
            return started
        }
    }
    private static let started = Started()

    /// `[northlight.app]` on the simulator; returns its URL and the environment with the key.
    private func configureNorthlight() async throws -> (URL, [String: String]) {
        let url = try await Self.started.url(of: Self.northlight)
        let key = await Self.northlight.addProject(tier: .starter)
        try """
            [northlight.app]
            url = "\(url.absoluteString)"
            api_key_env = "NL_KEY"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return (url, ["NL_KEY": key])
    }

    // MARK: -v

    /// `lookout -v …` as README shows it (before the command, for every command and for the
    /// REPL), and `feedback -v` / `bug -v`: each Northlight exchange on standard error with its
    /// method, path and status, never the key.
    func testVerboseBeforeTheCommandAndOnFeedbackAndBugShowsEachNorthlightExchange() async throws {
        let (url, env) = try await configureNorthlight()
        let key = try XCTUnwrap(env["NL_KEY"])
        try writeFile("board.lua", """
            local feedback = require "feedback"
            local items = assert(assert(feedback.client "app"):board())
            print("items", #items)
            """)
        let run = try lookout(["-v", "run", "board.lua"], environment: env)
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.hasPrefix("items\t"), run.description)
        XCTAssertTrue(run.stderr.contains("GET \(url.absoluteString)/feedback → 200"), run.stderr)
        XCTAssertTrue(run.stderr.contains("northlight: GET /api/v1/feedback → 200"), run.stderr)

        let repl = try lookout(["-v"], stdin: "1 + 2\n", environment: env)
        assertExit(repl, 0)
        XCTAssertTrue(repl.stdout.contains("3"), repl.description)

        let feedback = try lookout(["feedback", "-v", "--profile", "app", "--no-input", "--title", "Verbose", "--description", "d"],
                                   environment: env)
        assertExit(feedback, 0)
        XCTAssertTrue(feedback.stderr.contains("POST \(url.absoluteString)/feedback → 201"), feedback.stderr)
        XCTAssertTrue(feedback.stderr.contains("northlight: POST /api/v1/feedback → 201"), feedback.stderr)

        let bug = try lookout(["bug", "-v", "--profile", "app", "--no-input", "--no-diagnostics", "--title", "Verbose", "--description", "d"],
                              environment: env)
        assertExit(bug, 0)
        XCTAssertTrue(bug.stderr.contains("northlight: POST /api/v1/bugs → 201"), bug.stderr)

        let quiet = try lookout(["feedback", "--profile", "app", "--no-input", "--title", "Quiet", "--description", "d"], environment: env)
        assertExit(quiet, 0)
        XCTAssertFalse(quiet.stderr.contains("northlight:"), quiet.stderr)
        for result in [run, repl, feedback, bug] {
            XCTAssertFalse(result.stdout.contains(key) || result.stderr.contains(key), result.description)
        }
    }

    // MARK: status

    /// `lookout status` under a real `serve`: the alerts with their states and why, and LAST
    /// ERROR gone once the timer that failed runs without error again (the count stays).
    func testStatusShowsAlertStatesAndClearsTheLastErrorAfterASuccessfulRun() throws {
        try "[notify.phone]\ntype = \"log\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("Scripts/flaky.lua", """
            local alert = require "alert"
            local low = alert.define {
              id = "flaky-low", title = "Low", notify = { "phone" },
              series = function() return 60, os.time() * 1000 end,
              when = alert.below(70),
            }
            local n = 0
            timer.every(0.5, function()
              n = n + 1
              if n == 2 then error("flaky on purpose") end
              low:check()
              print("tick " .. n)
            end)
            """)
        let port = try freePort()
        let serve = try launch(["serve", "--status-port", String(port)])
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "status at http://127.0.0.1:\(port)/status"))
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "flaky on purpose"), serve.output(.stderr))
        XCTAssertTrue(serve.waitForOutput(containing: "tick 3"))
        var status = try lookout(["status"])
        var tick = 4
        // The success is recorded as the tick's task ends, just after it prints: look again after each tick.
        while status.stdout.contains("flaky on purpose"), tick < 30 {
            XCTAssertTrue(serve.waitForOutput(containing: "tick \(tick)"))
            tick += 1
            status = try lookout(["status"])
        }
        assertExit(status, 0)
        let script = try XCTUnwrap(status.stdout.split(separator: "\n").first { $0.hasPrefix("flaky.lua") }, status.stdout)
        XCTAssertFalse(script.contains("flaky on purpose"), status.stdout)
        XCTAssertTrue(script.contains("running"), status.stdout)
        XCTAssertTrue(status.stdout.contains("\nALERT "), status.stdout)
        let alert = try XCTUnwrap(status.stdout.split(separator: "\n").first { $0.hasPrefix("flaky-low") }, status.stdout)
        XCTAssertTrue(alert.contains("firing") && alert.contains("flaky.lua") && alert.contains("below 70"), status.stdout)

        serve.send(signal: SIGTERM)
        assertExit(try XCTUnwrap(serve.waitForExit(timeout: 30)), 0)
    }

    // MARK: method typos

    /// `home:lastest()` names the object and the method meant, under `run` and in the REPL;
    /// the traceback stays.
    func testAMistypedMethodNamesTheObjectAndTheMethodMeant() throws {
        try """
            [nightscout.home]
            url = "http://127.0.0.1:9"
            token_env = "NS_TOKEN"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["NS_TOKEN": "typo-0123456789abcdef"]
        try writeFile("typo.lua", """
            local nightscout = require "nightscout"
            local home = assert(nightscout.client "home")
            local t = timer.after(60, function() end)
            local ok, err = pcall(function() t:stpo() end)
            print(err)
            t:stop()
            home:lastest()
            """)
        let run = try lookout(["run", "typo.lua"], environment: env)
        assertExit(run, 1)
        XCTAssertTrue(run.stderr.contains("typo.lua:7: no method 'lastest' on nightscout client; did you mean 'latest'?"), run.stderr)
        XCTAssertTrue(run.stderr.contains("stack traceback:"), run.stderr)
        // A caught error keeps Lua's own text: the script may match it.
        XCTAssertTrue(run.stdout.contains("attempt to call a nil value (method 'stpo')"), run.stdout)

        let repl = try lookout(["repl"], stdin: "home = require('nightscout').client 'home'\nhome:lastest()\nhome:zzzzzzzzzz()\n", environment: env)
        XCTAssertTrue(repl.stderr.contains("no method 'lastest' on nightscout client; did you mean 'latest'?")
                      || repl.stdout.contains("no method 'lastest' on nightscout client; did you mean 'latest'?"), repl.description)
        XCTAssertTrue(repl.stderr.contains("no method 'zzzzzzzzzz' on nightscout client") || repl.stdout.contains("no method 'zzzzzzzzzz' on nightscout client"),
                      repl.description)
    }

    // MARK: numbers with units

    /// `chart.plot` of glucose entries: threshold rows labelled with the thresholds (70 and 180,
    /// not the axis ends 65 and 186 they share a row with), the unit named, and a profile's
    /// `units = "mmol"` drawing in mmol/L with the mg/dL thresholds converted.
    func testChartPlotLabelsThresholdsAndUnitsInTheProfilesUnit() throws {
        let plot = """
            local chart = require "chart"
            local t = 1700000000000
            local entries = { { sgv = 70, date = t }, { sgv = 120, date = t + 300000 }, { sgv = 180, date = t + 600000 } }
            print(chart.plot(entries, { low = 70, high = 180, tz = "UTC" }))
            """
        try writeFile("plot.lua", plot)
        let mgdl = try lookout(["run", "plot.lua"])
        assertExit(mgdl, 0)
        let rows = mgdl.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(rows.contains { $0.hasPrefix("180 ┤") }, mgdl.stdout)
        XCTAssertTrue(rows.contains { $0.hasPrefix(" 70 ┤") }, mgdl.stdout)
        XCTAssertTrue(rows.last?.hasSuffix("  mg/dL") ?? false, mgdl.stdout)

        try """
            [nightscout.home]
            url = "http://127.0.0.1:9"
            token_env = "NS_TOKEN"
            units = "mmol"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let mmol = try lookout(["run", "plot.lua"], environment: ["NS_TOKEN": "units-0123456789abcdef"])
        assertExit(mmol, 0)
        let mmolRows = mmol.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(mmolRows.contains { $0.hasPrefix("10.0 ┤") }, mmol.stdout)
        XCTAssertTrue(mmolRows.contains { $0.hasPrefix(" 3.9 ┤") }, mmol.stdout)
        XCTAssertTrue(mmolRows.last?.hasSuffix("  mmol/L") ?? false, mmol.stdout)
    }

    /// The REPL shows a reading's `age` and `delta` with their units.
    func testTheReplShowsAReadingsAgeAndDeltaWithUnits() throws {
        let repl = try lookout(["repl"], stdin: "bg = { sgv = 120, age = 42.3, delta = -3.2, direction = 'FortyFiveDown' }\nbg\n")
        assertExit(repl, 0)
        XCTAssertTrue(repl.stdout.contains("age = 42.3 --[[ 42 s ago ]]"), repl.stdout)
        XCTAssertTrue(repl.stdout.contains("delta = -3.2 --[[ -3.2 mg/dL per 5 min ]]"), repl.stdout)
    }

    /// Signal K leaves (a branch as `boat:get "navigation"` returns it) show their value in the
    /// usual display unit, from the path's meta.
    func testTheReplShowsSignalKValuesInDisplayUnits() throws {
        let lines = """
            nav = { speedOverGround = { value = 3.2, meta = { units = "m/s" } }, courseOverGroundTrue = { value = 1.5708, meta = { units = "rad" } } }
            nav
            water = { value = 290.15, meta = { units = "K" } }
            water
            """
        let repl = try lookout(["repl"], stdin: lines + "\n")
        assertExit(repl, 0)
        XCTAssertTrue(repl.stdout.contains("value = 3.2 --[[ 6.2 kn (m/s) ]]"), repl.stdout)
        XCTAssertTrue(repl.stdout.contains("value = 1.5708 --[[ 90.0° (rad) ]]"), repl.stdout)
        XCTAssertTrue(repl.stdout.contains("value = 290.15 --[[ 17.0 °C (K) ]]"), repl.stdout)
    }

    // MARK: sim

    /// `lookout sim nightscout --state DIR --token …` prints a profile to paste (URL and a 0600
    /// token file, no token on screen); pasted as printed it works, and a restart with the same
    /// --state keeps the URL and the token.
    func testSimNightscoutPrintsAProfileAndStateKeepsURLAndTokens() throws {
        let state = root + "/sim-state"
        try writeFile("read.lua", """
            local site = assert(require("nightscout").client "sim")
            local entries = assert(site:entries { count = 1 })
            print("entries", #entries)
            """)
        func start(_ extra: [String]) throws -> String {
            let sim = try launch(["sim", "nightscout", "--state", state] + extra)
            XCTAssertTrue(sim.waitForOutput(containing: "serving until Ctrl-C"), sim.output())
            let out = sim.output()
            let profile = try XCTUnwrap(out.components(separatedBy: "config profile (paste into config.toml):\n").last, out)
                .components(separatedBy: "serving until").first ?? ""
            try profile.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
            let run = try lookout(["run", "read.lua"])
            assertExit(run, 0)
            XCTAssertEqual(run.stdout, "entries\t0\n", out + run.description)
            sim.send(signal: SIGTERM)
            _ = sim.waitForExit(timeout: 30)
            return out
        }
        let first = try start(["--token", "reader:readable"])
        XCTAssertTrue(first.contains("[nightscout.sim]\nurl = \"http://127.0.0.1:"), first)
        XCTAssertTrue(first.contains("token_file = \"\(state)/reader.token\""), first)
        let token = try String(contentsOfFile: state + "/reader.token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(first.contains(token), first)
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: state + "/reader.token")[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o077, 0)

        let second = try start([])
        func url(_ text: String) -> String? { text.split(separator: "\n").first { $0.hasPrefix("url = ") }.map(String.init) }
        XCTAssertEqual(url(second), url(first), second)
        XCTAssertEqual(try String(contentsOfFile: state + "/reader.token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), token)
    }

    // MARK: doctor and serve

    /// `lookout doctor` checks each `[notify.*]` channel as sending would (a mistyped type gets a
    /// did-you-mean, a missing topic is named) and each script's settings against the settings
    /// the script declares (a ready script's from the copy in the binary).
    func testDoctorChecksNotifyChannelsAndScriptSettings() throws {
        try """
            [notify.phone]
            type = "ntfyy"
            topic = "lookout-test"
            [notify.partner]
            type = "ntfy"
            [notify.log]
            type = "log"
            [scripts."low-alert.lua".settings]
            low = "seventy"
            [scripts."mine.lua".settings]
            lwo = 65
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("Scripts/mine.lua", """
            local config = require "config"
            local s = config.settings { low = 70, site = "home", every = 60 * 5 }
            """)
        let doctor = try lookout(["doctor"], timeout: 120)
        assertExit(doctor, 1)
        func line(_ subject: String) -> String {
            doctor.stdout.split(separator: "\n").first { $0.split(separator: " ").dropFirst().first == Substring(subject) }.map(String.init)
                ?? "(no line for \(subject))\n\(doctor.stdout)"
        }
        XCTAssertTrue(line("notify.phone").contains(#"got "ntfyy" (did you mean "ntfy"?)"#), line("notify.phone"))
        XCTAssertTrue(line("notify.partner").contains("topic") && line("notify.partner").contains("required"), line("notify.partner"))
        XCTAssertTrue(line("notify.log").hasPrefix("  ok"), line("notify.log"))
        XCTAssertTrue(line(#"scripts."low-alert.lua""#).contains("low: expected a number, got a string"), line(#"scripts."low-alert.lua""#))
        XCTAssertTrue(line(#"scripts."mine.lua""#).contains("lwo: unknown setting (did you mean low?"), line(#"scripts."mine.lua""#))
    }

    /// `serve` on a folder runs its scripts, not the test scenarios beside them
    /// (`*.scenario.lua`) nor anything in a subfolder such as `scenarios/`.
    func testServeSkipsScenarioFiles() throws {
        try writeFile("Scripts/tick.lua", "timer.every(1, function() print('tick') end)\n")
        try writeFile("Scripts/night.scenario.lua", "print('scenario served') return { name = 'night' }\n")
        try writeFile("Scripts/scenarios/tick.overnight-low.lua", "print('scenario served') return { name = 'x' }\n")
        let port = try freePort()
        let serve = try launch(["serve", "--status-port", String(port)])
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "status at http://127.0.0.1:\(port)/status"))
        XCTAssertTrue(serve.waitForOutput(containing: "[tick.lua] tick"))
        let status = try lookout(["status"])
        XCTAssertTrue(status.stdout.contains("tick.lua"), status.stdout)
        XCTAssertFalse(status.stdout.contains("scenario"), status.stdout)
        serve.send(signal: SIGTERM)
        let result = try XCTUnwrap(serve.waitForExit(timeout: 30))
        XCTAssertFalse(result.stdout.contains("scenario served"), result.stdout)
    }

    // MARK: Northlight

    /// A submission queued on a 503 is sent by the next run that opens the profile, even one
    /// that ends at once (the run waits for it, bounded).
    func testTheNextRunThatOpensTheProfileSendsQueuedSubmissions() async throws {
        let (_, env) = try await configureNorthlight()
        let key = try XCTUnwrap(env["NL_KEY"])
        try writeFile("submit.lua", """
            local app = assert(require("feedback").client "app")
            local r = assert(app:submit { title = "Queued while busy", description = "503" })
            print(r.state)
            """)
        await Self.northlight.injectFailures(status: 503, count: 1)
        let first = try lookout(["run", "submit.lua"], environment: env)
        assertExit(first, 0)
        XCTAssertEqual(first.stdout, "queued\n", first.description)
        try writeFile("open.lua", "assert(require('feedback').client 'app')\n")
        let second = try lookout(["run", "open.lua"], environment: env)
        assertExit(second, 0)
        let titles = await Self.northlight.feedback(apiKey: key).compactMap { $0["title"]?.stringValue }
        XCTAssertEqual(titles.filter { $0 == "Queued while busy" }.count, 1, "\(titles)\n\(second)")
    }

    /// `bug --diagnostics` promises no URLs: an outbox error naming the server it could not
    /// reach loses the URL and the host.
    func testBugDiagnosticsCarryNoURLs() async throws {
        let (url, env) = try await configureNorthlight()
        try """
            [northlight.app]
            url = "\(url.absoluteString)"
            api_key_env = "NL_KEY"
            [northlight.offline]
            url = "http://127.0.0.1:9/api/v1"
            api_key_env = "NL_KEY"
            timeout = "3s"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let queued = try lookout(["feedback", "--profile", "offline", "--no-input", "--title", "Offline", "--description", "d"], environment: env)
        assertExit(queued, 0)
        XCTAssertTrue(queued.stdout.contains("queued in the outbox"), queued.description)
        let bug = try lookout(["bug", "--profile", "app", "--no-input", "--diagnostics", "--title", "Diag", "--description", "d"],
                              environment: env)
        assertExit(bug, 0)
        let summary = try XCTUnwrap(bug.stderr.components(separatedBy: "Diagnostics summary:").last, bug.stderr)
        XCTAssertTrue(summary.contains("last errors:"), summary)
        XCTAssertTrue(summary.contains("connection refused"), summary)
        XCTAssertFalse(summary.contains("://"), summary)
        XCTAssertFalse(summary.contains("127.0.0.1"), summary)
    }

    /// A vote's 404 says whether the item or the API is missing (a url without /api/v1).
    func testAVoteTellsAMissingRouteFromAMissingItem() async throws {
        let (url, env) = try await configureNorthlight()
        let root = url.absoluteString.replacingOccurrences(of: "/api/v1", with: "")
        try """
            [northlight.app]
            url = "\(url.absoluteString)"
            api_key_env = "NL_KEY"
            user_id = "tester"
            [northlight.root]
            url = "\(root)"
            api_key_env = "NL_KEY"
            user_id = "tester"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("vote.lua", """
            local feedback = require "feedback"
            for _, profile in ipairs { "app", "root" } do
              local n, err = feedback.client(profile):vote "00000000-0000-4000-8000-000000000000"
              print(profile, n, err and err.message)
            end
            """)
        let run = try lookout(["run", "vote.lua"], environment: env)
        assertExit(run, 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, run.description)
        XCTAssertTrue(lines.first?.contains("no feedback item 00000000-0000-4000-8000-000000000000") ?? false, run.stdout)
        XCTAssertTrue(lines.last?.contains("the url should end in /api/v1") ?? false, run.stdout)
        XCTAssertFalse(lines.last?.contains("no feedback item") ?? true, run.stdout)
    }

    // MARK: documentation

    /// Every `lookout …` command README and the ready scripts' headers show, as printed: each
    /// parses (subcommands, options, values, validation) as the binary reads it. Syntax
    /// summaries (`[…]`, `A|B`, `…`) are left out; upper-case placeholders (`ID`, `FILE`) get a value.
    func testEveryCommandShownInTheReadmeAndTheReadyScriptsParses() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        var sources = [("README.md", try String(contentsOfFile: root + "/README.md", encoding: .utf8))]
        for name in try FileManager.default.contentsOfDirectory(atPath: root + "/Scripts").sorted() where name.hasSuffix(".lua") {
            let text = try String(contentsOfFile: root + "/Scripts/" + name, encoding: .utf8)
            sources.append((name, String(text.components(separatedBy: "]]").first ?? "")))  // the header comment
        }
        var commands: [(String, String)] = []
        for (file, text) in sources {
            var rest = text[...]
            while let start = rest.range(of: "lookout ") {
                let before = rest[..<start.lowerBound].last
                rest = rest[start.upperBound...]
                // README: a code span or a line of its own; a header's plain text also after a space or "(".
                let starts: Set<Character?> = file == "README.md" ? ["`", "\n", nil] : ["`", " ", "\n", "(", nil]
                guard starts.contains(before) else { continue }
                // To the closing backtick, or (in a header's plain text) to three spaces, ")" or the line's end.
                let end = before == "`" ? rest.firstIndex(of: "`") : rest.firstIndex { $0 == "\n" || $0 == ")" }
                var command = String(rest[..<(end ?? rest.endIndex)])
                if before != "`", let wide = command.range(of: "   ") { command = String(command[..<wide.lowerBound]) }
                command = command.trimmingCharacters(in: .whitespaces)
                guard !command.isEmpty, !command.contains(where: { "[]|…<>{}".contains($0) }),
                      command.first?.isLetter == true || command.first == "-" else { continue }
                commands.append((file, command))
            }
        }
        XCTAssertGreaterThan(commands.count, 40)
        try writeFile("Scripts/x.lua", "")
        var failures: [String] = []
        for (file, command) in commands {
            var words: [String] = []
            var quoted: String?
            for word in command.split(separator: " ").map(String.init) {
                if var open = quoted {
                    open += " " + word
                    if word.hasSuffix("'") { words.append(String(open.dropFirst().dropLast())); quoted = nil } else { quoted = open }
                } else if word.hasPrefix("'"), !(word.count > 1 && word.hasSuffix("'")) {
                    quoted = word
                } else {
                    words.append(word.count > 1 && word.hasPrefix("'") && word.hasSuffix("'") ? String(word.dropFirst().dropLast()) : word)
                }
            }
            // Placeholders (ID, FILE, NAME:ROLE) stand for a value.
            words = words.map { $0.count >= 2 && $0.allSatisfy({ $0.isUppercase || $0 == ":" || $0 == "_" }) ? "x" : $0 }
            // A command named in prose (`lookout test`, `lookout remote release`): its help.
            let named = words.allSatisfy { $0.allSatisfy(\.isLowercase) }
            let result = try lookout(named ? words + ["--help"] : words, environment: ["LOOKOUT_PARSE_ONLY": "1"])
            let parsed = named || words == ["--version"] ? result.exitCode == 0 && !result.stdout.isEmpty : result.stdout.hasPrefix("parsed: ")
            if result.exitCode != 0 || !parsed {
                failures.append("\(file): `lookout \(command)`: \(result.stderr.split(separator: "\n").first ?? "")")
            }
        }
        XCTAssertEqual(failures, [], failures.joined(separator: "\n"))
    }

    /// README's Ctrl-C row says what `run` prints when interrupted.
    func testTheReadmeSaysWhatCtrlCPrints() throws {
        let readme = try String(contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path + "/README.md", encoding: .utf8)
        let row = try XCTUnwrap(readme.split(separator: "\n").first { $0.hasPrefix("| Ctrl-C / SIGTERM |") }.map(String.init))
        try writeFile("spin.lua", "print('ready') while true do end\n")
        let process = try launch(["run", "spin.lua"])
        XCTAssertTrue(process.waitForOutput(containing: "ready\n"))
        process.send(signal: SIGINT)
        let result = try XCTUnwrap(process.waitForExit(timeout: 20))
        assertExit(result, 130)
        let said = try XCTUnwrap(result.stderr.split(separator: "\n").first.map(String.init), result.description)
        XCTAssertTrue(row.contains("`\(said.replacingOccurrences(of: "spin", with: "NAME"))`"), "README: \(row)\nstderr: \(result.stderr)")
    }
}
