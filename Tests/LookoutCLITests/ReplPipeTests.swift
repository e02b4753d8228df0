import Foundation
import XCTest

/// `lookout repl` (and plain `lookout`) reading lines from a pipe: no prompts, no banner.
final class ReplPipeTests: CLITestCase, @unchecked Sendable {
    private func repl(_ input: String, arguments: [String] = ["repl"], file: StaticString = #filePath, line: UInt = #line)
        throws -> ProcessResult
    {
        try lookout(arguments, stdin: input, file: file, line: line)
    }

    func testStatementSpanningLinesThenExpression() throws {
        let result = try repl("x = 1 +\n 2\nx\n")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "3\n")
        XCTAssertEqual(result.stderr, "")
    }

    func testNoArgumentsWithPipedInputIsTheREPL() throws {
        let result = try repl("x = 1 +\n 2\nx\n", arguments: [])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "3\n")
    }

    func testValuesArePrettyPrinted() throws {
        let result = try repl("1, 'a', nil\n=2 * 21\nprint('printed')\n")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "1, \"a\", nil\n42\nprinted\n")
    }

    func testErrorsPrintMessagesAndTheREPLGoesOn() throws {
        let result = try repl("error('first failure')\nx = = 1\nprint('still alive')\n")
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("first failure"), result.description)
        XCTAssertTrue(result.stdout.contains("unexpected symbol"), result.description)
        XCTAssertTrue(result.stdout.hasSuffix("still alive\n"), result.description)
    }

    func testRuntimeErrorHasLocationAndTraceback() throws {
        let result = try repl("function f() error('deep') end\nf()\n")
        XCTAssertTrue(result.stdout.contains("repl:1: deep"), result.description)
        XCTAssertTrue(result.stdout.contains("stack traceback"), result.description)
    }

    func testWaitingWorksBetweenLines() throws {
        let result = try repl(
            "t = task.spawn(function() sleep(0.02) return 'done' end)\nsleep(0.01)\ntask.wait(t)\n")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "true, \"done\"\n")
    }

    func testTasksCommandListsTasksAndTimers() throws {
        let result = try repl(
            """
            t = timer.every(10, function() end)
            s = task.spawn(function() sleep(60) end)
            .tasks

            """)
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("timer every 10s, created at repl:1"), result.description)
        XCTAssertTrue(result.stdout.contains("task spawned at repl:1"), result.description)
        XCTAssertTrue(result.stdout.contains("memory:"), result.description)
    }

    func testTasksCommandWhenIdle() throws {
        let result = try repl(".tasks\n")
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.hasPrefix("memory: "), result.description)
    }

    func testResetLoadHelpAndUnknownCommands() throws {
        try writeFile("lib.lua", "greeting = 'hi from lib'\n")
        let result = try repl(
            """
            x = 5
            .reset
            x
            .load lib.lua
            greeting
            .help
            .nosuch

            """)
        assertExit(result, 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("new Lua state") }, result.description)
        XCTAssertTrue(lines.contains("nil"), "globals are gone after .reset\n\(result)")
        XCTAssertTrue(lines.contains("\"hi from lib\""), result.description)
        XCTAssertTrue(lines.contains { $0.hasPrefix(".tasks") }, result.description)
        XCTAssertTrue(result.stdout.contains("unknown command .nosuch"), result.description)
    }

    /// `1 +` goes on on the next line (an unfinished expression), as `x = 1 +` does.
    func testAnUnfinishedExpressionContinuesOnTheNextLine() throws {
        let result = try repl("1 +\n2\n")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "3\n")
        XCTAssertEqual(result.stderr, "")
    }

    /// help() suggests only what the REPL can reach; a client's method and the client itself have help.
    func testHelpOfClientsAndTheirMethods() throws {
        let result = try repl("""
            help()
            home = require("nightscout").connect { url = "http://127.0.0.1:9" }
            help(home.entries)
            help(home)
            help(home.upload_bg)

            """)
        assertExit(result, 0)
        let out = result.stdout
        XCTAssertFalse(out.contains("help(alert)"), out)  // `alert` is not a global of the REPL
        XCTAssertTrue(out.contains("\nnightscout.Client:entries(opts?) -> "), out)
        XCTAssertFalse(out.contains("no help for function"), out)
        XCTAssertTrue(out.contains("nightscout.Client\n\nMethods:\n  nightscout.Client:entries"), out)
        // code examples keep their lines (this one follows a "Context:" line)
        XCTAssertTrue(out.contains("\n```lua\nassert(home:upload_bg { sgv = 112, date = 1714557600000, slope = -0.4, device = \"lookout-demo\" })\n```\n"), out)
    }

    /// help(nightscout) where `nightscout` is not a global gets nil: it says so and how to name a
    /// module, instead of the module list as if help() had been typed.
    func testHelpOfANilValueSaysHowToNameAModule() throws {
        let result = try repl("help(nightscout)\n")
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.hasPrefix("help(nil): the value given is nil, not a module"), result.stdout)
        XCTAssertTrue(result.stdout.contains("help \"nightscout\""), result.stdout)
    }

    /// `.reset` rereads config.toml: a profile added meanwhile is there, and a broken file keeps
    /// the last good configuration and says so.
    func testResetRereadsTheConfig() throws {
        try "[nightscout.home]\nurl = \"http://127.0.0.1:9\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let repl = try launch(["repl"])
        repl.write("print(table.concat(require('config').profiles('nightscout'), ','))\n")
        XCTAssertTrue(repl.waitForOutput(containing: "home\n"))
        try "[nightscout.home]\nurl = \"http://127.0.0.1:9\"\n[nightscout.away]\nurl = \"http://127.0.0.1:10\"\n"
            .write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        var mark = repl.output().utf8.count
        repl.write(".reset\nprint(table.concat(require('config').profiles('nightscout'), ','))\n")
        XCTAssertTrue(repl.waitForOutput(after: mark, containing: "away,home\n"))
        XCTAssertTrue(repl.output().contains("config.toml reread"), repl.output())
        try "[nightscout.home\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        mark = repl.output().utf8.count
        repl.write(".reset\nprint(#require('config').profiles('nightscout'))\n")
        XCTAssertTrue(repl.waitForOutput(after: mark, containing: "config.toml not reread ("))
        XCTAssertTrue(repl.waitForOutput(after: mark, containing: "kept the configuration from before"))
        XCTAssertTrue(repl.waitForOutput(after: mark, containing: "\n2\n"))
        repl.closeInput()
        XCTAssertNotNil(repl.waitForExit())
    }

    /// Entries show their glucose with its unit (the configured one first) and the trend arrow.
    func testEntriesShowGlucoseWithUnitsAndArrows() throws {
        try "[nightscout.home]\nurl = \"http://127.0.0.1:9\"\nunits = \"mmol\"\n"
            .write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try repl("""
            ns = require "nightscout"
            { sgv = 120, direction = "FortyFiveDown", type = "sgv" }

            """)
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("sgv = 120 --[[ 6.7 mmol/L (120 mg/dL) ↘ ]]"), result.description)
    }

    func testLoadOption() throws {
        try writeFile("setup.lua", "answer = 42\n")
        let result = try lookout(["repl", "--load", "setup.lua"], stdin: "answer\n")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "42\n")
    }

    func testQuitStopsReading() throws {
        let result = try repl("print(1)\n.quit\nprint(2)\n")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "1\n")
    }

    func testREPLIsSandboxedUnlessTrusted() throws {
        let plain = try repl("io == nil\n")
        XCTAssertEqual(plain.stdout, "true\n")
        let trusted = try lookout(["repl", "--trusted"], stdin: "io == nil\n")
        XCTAssertEqual(trusted.stdout, "false\n")
    }

    func testREPLHonoursCPULimit() throws {
        let result = try lookout(["repl", "--cpu-limit", "200ms"], stdin: "while true do end\nprint('next')\n", timeout: 30)
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("CPU limit exceeded"), result.description)
        XCTAssertTrue(result.stdout.hasSuffix("next\n"), result.description)
    }

    func testSIGINTCancelsTheRunningLine() throws {
        let process = try launch(["repl"])
        process.write("print('sleep' .. 'ing') sleep(60) print('woke')\n")
        guard process.waitForOutput(containing: "sleeping\n") else { return }
        process.send(signal: SIGINT)
        process.waitForOutput(containing: "cancelled\n")
        process.write("1 + 2\n")
        process.closeInput()
        let result = try XCTUnwrap(process.waitForExit(timeout: 20))
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "sleeping\ncancelled\n3\n")
    }

    private let guardedTask = """
        t = task.spawn(function() local x <close> = setmetatable({}, { __close = function() print('closed') end }) sleep(60) end)
        print('re' .. 'ady')

        """

    func testEndOfInputCancelsTasksAndRunsCloseVariables() throws {
        let result = try repl(guardedTask)
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "ready\nclosed\n")
    }

    /// SIGTERM ends the REPL like it ends `lookout run`: tasks are cancelled and their `<close>`
    /// variables run (the REPL calls exit() at once instead).
    func testSIGTERMCancelsTasksAndRunsCloseVariables() throws {
        let process = try launch(["repl"])
        process.write(guardedTask)
        guard process.waitForOutput(containing: "ready\n") else { return }
        process.send(signal: SIGTERM)
        let result = try XCTUnwrap(process.waitForExit(timeout: 20))
        assertExit(result, 130)
        XCTAssertTrue(result.stdout.contains("closed\n"), "the task's <close> variable did not run\n\(result)")
    }

    func testBadConfigIsConfigErrorForTheREPL() throws {
        try "[limits\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try repl("1\n")
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("config.toml:1"), result.description)
    }
}
