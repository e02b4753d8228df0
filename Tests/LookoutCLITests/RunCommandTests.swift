import Foundation
import XCTest

/// `lookout run`: exit statuses, error reports, arguments, limits, sandbox and `require`.
final class RunCommandTests: CLITestCase, @unchecked Sendable {
    // MARK: Success and errors

    func testScriptThatSucceedsExitsZero() throws {
        let result = try runScript(#"print("hello", 42)"#)
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "hello\t42\n")
        XCTAssertEqual(result.stderr, "")
    }

    func testScriptErrorExitsOneWithLocationAndTraceback() throws {
        let result = try runScript(
            """
            local function explode()
              error("boom")
            end
            explode()
            """, name: "fails.lua")
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("fails.lua:2: boom"), result.description)
        XCTAssertTrue(result.stderr.contains("stack traceback"), result.description)
        XCTAssertTrue(result.stderr.contains("fails.lua:4:"), "the traceback names the calling line\n\(result)")
        XCTAssertEqual(result.stdout, "")
    }

    func testSyntaxErrorExitsOneWithLocation() throws {
        let result = try runScript("local x = 1\nx = = 2\n", name: "syntax.lua")
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("syntax.lua:2:"), result.description)
    }

    func testErrorInTimerExitsOneAndNamesTheTimer() throws {
        let result = try runScript(
            """
            print("start")
            timer.after(0.01, function()
              error("late failure")
            end)
            """, name: "timers.lua")
        assertExit(result, 1)
        XCTAssertEqual(result.stdout, "start\n")
        XCTAssertTrue(result.stderr.contains("timer created at timers.lua:2"), result.description)
        XCTAssertTrue(result.stderr.contains("timers.lua:3: late failure"), result.description)
    }

    func testErrorInSpawnedTaskExitsOneAndNamesTheTask() throws {
        let result = try runScript(
            """
            task.spawn(function()
              sleep(0.01)
              error("task failure")
            end)
            """, name: "tasks.lua")
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("task spawned at tasks.lua:1"), result.description)
        XCTAssertTrue(result.stderr.contains("tasks.lua:3: task failure"), result.description)
    }

    func testRunWaitsForTimersAndTasks() throws {
        let result = try runScript(
            """
            timer.after(0.3, function() print("timer") end)
            task.spawn(function() sleep(0.01) print("task") end)
            print("main")
            """)
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "main\ntask\ntimer\n")
    }

    func testLargeAndUnicodeOutputIsComplete() throws {
        // Past the default output rate (10 lines a second after 500): this config lifts it.
        try "[limits]\nlog_rate = 0\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try runScript("print('héllo ✓') for i = 1, 100000 do print(i) end")
        assertExit(result, 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.first, "héllo ✓")
        XCTAssertEqual(lines.count, 100_002, "every line arrives, then a final newline")
        XCTAssertEqual(lines[100_000], "100000")
    }

    /// Executable scripts start with `#!/usr/bin/env -S lookout run`; like the `lua` interpreter,
    /// `lookout run` should skip a first line starting with `#` (keeping line numbers right).
    func testShebangLineIsSkipped() throws {
        let result = try runScript(
            "#!/usr/bin/env -S lookout run\nprint('shebang ok')\nerror('line three')\n", name: "tool.lua")
        XCTAssertEqual(result.stdout, "shebang ok\n", result.description)
        XCTAssertTrue(result.stderr.contains("tool.lua:3: line three"), result.description)
        assertExit(result, 1)
    }

    // MARK: Arguments and -e

    func testArgumentsReachTheScript() throws {
        let result = try runScript(
            """
            print(arg[0], arg[1], arg[2], #arg)
            local script = require "script"
            print(script.name, table.concat(script.args, ","), #script.args)
            """, name: "args.lua", arguments: ["a", "b c"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "args.lua\ta\tb c\t2\nargs.lua\ta,b c\t2\n")
    }

    func testFlagsAfterTheScriptBelongToTheScript() throws {
        let result = try runScript(
            "print(arg[1], arg[2], io == nil)", name: "flags.lua", arguments: ["--trusted", "-v"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "--trusted\t-v\ttrue\n", "flags after the script are its arguments")
        // … and stderr says so for each that spells one of run's own options.
        XCTAssertTrue(result.stderr.contains("--trusted after the script name is passed to the script; put it before the script"), result.stderr)
        XCTAssertTrue(result.stderr.contains("-v after the script name is passed to the script"), result.stderr)
    }

    /// `lookout run FILE --time-limit 8s`: the script gets both words, and stderr says where the
    /// option belongs; a script argument that is not one of run's options is not mentioned.
    func testRunsOwnOptionAfterTheScriptIsNamedOnStderr() throws {
        let result = try runScript("print(#arg)", name: "limit.lua", arguments: ["--time-limit", "8s", "--mine"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "3\n")
        XCTAssertEqual(result.stderr, "lookout: --time-limit after the script name is passed to the script; "
                       + "put it before the script to mean `run`'s option\n")
    }

    func testScriptInAnotherFolderKeepsThePathInArgZero() throws {
        try writeFile("scripts/show.lua", "print(arg[0], require('script').name)")
        let result = try lookout(["run", "scripts/show.lua"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "scripts/show.lua\tshow.lua\n")
    }

    func testInlineCode() throws {
        let result = try lookout(["run", "-e", "print(1 + 2, arg[0], arg[1])", "x"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "3\t-e\tx\n")
    }

    func testInlineCodeError() throws {
        let result = try lookout(["run", "-e", "error('inline failure')"])
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("(command line):1: inline failure"), result.description)
    }

    func testMissingScriptFile() throws {
        let result = try lookout(["run", "nosuch.lua"])
        XCTAssertNotEqual(result.exitCode, 0, result.description)
        XCTAssertEqual(result.exitCode, 2, "an unreadable script is a usage error\n\(result)")
        XCTAssertTrue(result.stderr.contains("nosuch.lua"), result.description)
        XCTAssertFalse(result.stderr.contains("stack traceback"), result.description)
    }

    func testRunWithoutScriptIsUsageError() throws {
        let result = try lookout(["run"])
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("give a script file"), result.description)
    }

    // MARK: Flags and configuration

    func testBadMemoryLimitIsUsageError() throws {
        try writeFile("ok.lua", "print('should not run')")
        let result = try lookout(["run", "--memory-limit", "banana", "ok.lua"])
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("--memory-limit"), result.description)
        XCTAssertTrue(result.stderr.contains("banana"), result.description)
        XCTAssertEqual(result.stdout, "")
    }

    func testBadCPUAndTimeLimitsAreUsageErrors() throws {
        try writeFile("ok.lua", "print('should not run')")
        for (flag, value) in [("--cpu-limit", "soon"), ("--time-limit", "5 parsecs")] {
            let result = try lookout(["run", flag, value, "ok.lua"])
            assertExit(result, 2)
            XCTAssertTrue(result.stderr.contains(flag), result.description)
            XCTAssertEqual(result.stdout, "")
        }
    }

    func testUnknownFlagIsUsageError() throws {
        try writeFile("ok.lua", "print('should not run')")
        let result = try lookout(["run", "--no-such-flag", "ok.lua"])
        assertExit(result, 2)
        XCTAssertEqual(result.stdout, "")
    }

    func testInvalidConfigSyntaxIsConfigError() throws {
        try "[limits]\ncpu = \"5s\"\nmemory = = \"64MB\"\n".write(
            toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try runScript("print('should not run')")
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("config.toml:3"), "the message points at the line\n\(result)")
        XCTAssertEqual(result.stdout, "")
    }

    func testInvalidConfigValueIsConfigError() throws {
        try "# limits\n\n[limits]\nmemory = true\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try runScript("print('should not run')")
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("config.toml:4"), result.description)
        XCTAssertTrue(result.stderr.contains("limits.memory"), result.description)
    }

    func testUnknownConfigSectionIsConfigError() throws {
        try "[limitz]\ncpu = 1\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try runScript("print('should not run')")
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("config.toml:1"), result.description)
    }

    func testCPULimitFlagStopsABusyLoop() throws {
        // The loop never ends by itself: ending at all (within the run's timeout) is the limit's doing.
        let result = try runScript("while true do end", flags: ["--cpu-limit", "0.2"], timeout: 120)
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("CPU limit exceeded"), result.description)
    }

    func testAStateTheLimitsCannotStopEndsTheRunWithAMessageNamingTheLimit() throws {
        // A finalizer on a metatable the host shares runs with Lua's hooks off: only the stall
        // watchdog ends this run.
        let result = try runScript("""
            json.array_mt.__gc = function() while true do end end
            local t = json.decode("[1]")
            t = nil
            collectgarbage()
            print("not reached")
            """, flags: ["--cpu-limit", "0.3"], timeout: 60)
        assertExit(result, 1)
        XCTAssertFalse(result.stdout.contains("not reached"), result.description)
        XCTAssertTrue(result.stderr.contains("lookout: script.lua: CPU limit exceeded (300ms, see --cpu-limit) and the script did not stop within 2s"), result.description)
        XCTAssertTrue(result.stderr.contains("; exiting"), result.description)
    }

    func testCPULimitFromConfig() throws {
        try "[limits]\ncpu = \"200ms\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try runScript("while true do end", timeout: 30)
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("CPU limit exceeded"), result.description)
    }

    func testCPULimitFlagOverridesConfig() throws {
        try "[limits]\ncpu = \"1h\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try runScript("while true do end", flags: ["--cpu-limit", "200ms"], timeout: 30)
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("CPU limit exceeded"), result.description)
    }

    func testMemoryLimitFlag() throws {
        let result = try runScript(
            "local t = {} for i = 1, 1e8 do t[i] = ('x'):rep(100) .. i end", flags: ["--memory-limit", "4MB"],
            timeout: 30)
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("not enough memory"), result.description)
        XCTAssertTrue(result.stderr.contains("--memory-limit"), result.description)
    }

    func testTimeLimitStopsABusyLoop() throws {
        let result = try runScript("while true do end", flags: ["--cpu-limit", "0", "--time-limit", "300ms"], timeout: 30)
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("time limit exceeded"), result.description)
    }

    /// `--time-limit` is documented as a wall-clock limit for the whole run; a script that waits
    /// (sleep, timers, HTTP) is never stopped because the limit is only checked by the
    /// instruction-count hook while Lua code runs.
    func testTimeLimitStopsAScriptThatWaits() throws {
        // An hour's sleep: ending within the run's timeout is the limit's doing.
        let result = try runScript("sleep(3600) print('still here')", flags: ["--time-limit", "500ms"], timeout: 120)
        XCTAssertEqual(result.exitCode, 1, result.description)
        XCTAssertTrue(result.stderr.contains("time limit exceeded"), result.description)
        XCTAssertFalse(result.stdout.contains("still here"), result.description)
    }

    // MARK: Logging

    func testLogLevelsFromFlagsAndConfig() throws {
        let source = "log.debug('debug-line') log.info('info-line') log.warn('warn-line') print('out')"
        let plain = try runScript(source, name: "logs.lua")
        assertExit(plain, 0)
        XCTAssertEqual(plain.stdout, "out\n", "log lines go to stderr")
        XCTAssertTrue(plain.stderr.contains("info-line"), plain.description)
        XCTAssertTrue(plain.stderr.contains("warn-line"), plain.description)
        XCTAssertFalse(plain.stderr.contains("debug-line"), plain.description)

        let verbose = try runScript(source, name: "logs.lua", flags: ["--verbose"])
        XCTAssertTrue(verbose.stderr.contains("debug-line"), verbose.description)

        try "[log]\nlevel = \"warning\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let quiet = try runScript(source, name: "logs.lua")
        assertExit(quiet, 0)
        XCTAssertFalse(quiet.stderr.contains("info-line"), quiet.description)
        XCTAssertTrue(quiet.stderr.contains("warn-line"), quiet.description)
    }

    // MARK: script.exit

    func testScriptExitSetsTheStatus() throws {
        let result = try runScript(
            """
            local script = require "script"
            print("before")
            script.exit(3)
            print("after")
            """)
        assertExit(result, 3)
        XCTAssertEqual(result.stdout, "before\n")
        XCTAssertEqual(result.stderr, "", "exiting is not an error")
    }

    func testScriptExitFromATask() throws {
        let result = try runScript(
            """
            task.spawn(function()
              sleep(0.01)
              require("script").exit(4)
            end)
            """)
        assertExit(result, 4)
        XCTAssertEqual(result.stderr, "")
    }

    /// `script.exit` is documented to cancel every task (running their `<close>` variables) and
    /// end the run; other tasks and timers keep the run going instead.
    func testScriptExitCancelsOtherTasksAndTimers() throws {
        let result = try runScript(
            """
            task.spawn(function()
              local guard <close> = setmetatable({}, { __close = function() print("closed") end })
              sleep(3600)
            end)
            timer.every(0.5, function() end)
            sleep(0.05)
            require("script").exit(3)
            """, timeout: 120)  // without script.exit the run would go on for an hour
        assertExit(result, 3)
        XCTAssertEqual(result.stdout, "closed\n", result.description)
    }

    // MARK: Sandbox

    func testPlainRunsHaveNoIO() throws {
        let result = try runScript(
            "print(io == nil, os.getenv == nil, os.execute == nil, dofile == nil, loadfile == nil, type(os.time))")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "true\ttrue\ttrue\ttrue\ttrue\tfunction\n")
    }

    func testTrustedRunsHaveIO() throws {
        try writeFile("data.txt", "file contents")
        let result = try runScript(
            """
            local f = assert(io.open("data.txt"))
            print(f:read("a"), os.getenv("LOOKOUT_HOME") ~= nil)
            f:close()
            """, flags: ["--trusted"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "file contents\ttrue\n")
    }

    func testRequireFindsModulesInTheScriptFolder() throws {
        try writeFile("scripts/helper.lua", "return { greet = function(n) return 'hello ' .. n end }")
        try writeFile("scripts/lib/util.lua", "return { twice = function(x) return 2 * x end }")
        try writeFile("scripts/main.lua", "print(require('helper').greet('you'), require('lib.util').twice(21))")
        // Run from the parent folder: modules are found next to the script, not in the current directory.
        let result = try lookout(["run", "scripts/main.lua"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "hello you\t42\n")
    }

    func testRequireOutsideTheScriptFolderIsRefused() throws {
        try writeFile("secret.lua", "print('loaded the secret') return {}")
        try writeFile(
            "scripts/main.lua",
            """
            local ok, err = pcall(require, "../secret")
            print(ok, err)
            require "../secret"
            """)
        let result = try lookout(["run", "scripts/main.lua"])
        assertExit(result, 1)
        XCTAssertFalse(result.stdout.contains("loaded the secret"), result.description)
        XCTAssertTrue(result.stdout.hasPrefix("false\t"), result.description)
        XCTAssertTrue(result.stderr.contains("cannot contain"), result.description)
        XCTAssertTrue(result.stderr.contains("main.lua:3:"), result.description)
    }

    func testTheSandboxRequireCannotLoadCLibraries() throws {
        let result = try runScript("print(package.loadlib == nil, package.cpath)")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "true\t\n")
    }

    /// --trusted: stock's require (package.path, package.cpath, loadlib), searching the script's
    /// folder first, so a module beside the script loads whatever the current folder is.
    func testTrustedRequireIsStocksAndSearchesTheScriptFolderFirst() throws {
        try writeFile("scripts/helper.lua", "return { where = 'script folder' }")
        try writeFile("helper.lua", "return { where = 'current folder' }")
        try writeFile(
            "scripts/main.lua",
            """
            print(require("helper").where, type(package.loadlib), package.cpath ~= "")
            print(package.path:find(arg[0]:match("^(.*)/") .. "/?.lua;", 1, true) == 1)
            print(require("json") == json)
            """)
        let result = try lookout(["run", "--trusted", "scripts/main.lua"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "script folder\tfunction\ttrue\ntrue\ntrue\n")
    }
}
