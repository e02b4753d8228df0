import Lua
import LookoutTestSupport
import XCTest

final class REPLEngineTests: XCTestCase {
    func makeREPL(_ transcript: Transcript) async throws -> LuaRuntime {
        let runtime = LuaRuntime(options: testOptions(transcript, name: "repl"))
        try await runtime.start()
        try await runtime.prepareREPL()
        return runtime
    }

    func testExpressionsStatementsAndContinuation() async throws {
        let t = Transcript()
        let repl = try await makeREPL(t)
        let r1 = await repl.evaluate("1 + 2")
        XCTAssertEqual(r1, .output("3"))
        let r2 = await repl.evaluate("x = 1 +")
        XCTAssertEqual(r2, .incomplete)
        let r3 = await repl.evaluate("x = 1 +\n 2")
        XCTAssertEqual(r3, .output(""))
        let r4 = await repl.evaluate("x")
        XCTAssertEqual(r4, .output("3"))
        let r5 = await repl.evaluate("=x * 2")
        XCTAssertEqual(r5, .output("6"))
        let r6 = await repl.evaluate("{ b = { 1, 2 }, a = json.null, s = 'x' }")
        XCTAssertEqual(r6, .output(#"{ a = null, b = { 1, 2 }, s = "x" }"#))
        let r7 = await repl.evaluate("1, nil, 'a'")
        XCTAssertEqual(r7, .output(#"1, nil, "a""#))
        let r8 = await repl.evaluate("_")
        XCTAssertEqual(r8, .output("1"))
        await repl.close()
    }

    func testAsyncCallsAndErrorsAtThePrompt() async throws {
        let t = Transcript()
        let repl = try await makeREPL(t)
        let r1 = await repl.evaluate("sleep(0.01); return 5")
        XCTAssertEqual(r1, .output("5"))
        let r2 = await repl.evaluate("error('nope')")
        guard case .error(let message) = r2 else { return XCTFail("\(r2)") }
        XCTAssertTrue(message.hasPrefix("repl:1: nope"), message)
        let r3 = await repl.evaluate("local function f() return 1 +")
        XCTAssertEqual(r3, .incomplete)
        let r4 = await repl.evaluate("1 +* 2")
        guard case .error(let syntax) = r4 else { return XCTFail("\(r4)") }
        XCTAssertTrue(syntax.contains("unexpected symbol"), syntax)
        XCTAssertEqual(t.errors.count, 0, "REPL errors are shown inline, not reported as script errors")
        await repl.close()
    }

    func testTimersKeepRunningBetweenLines() async throws {
        let t = Transcript()
        let repl = try await makeREPL(t)
        _ = await repl.evaluate("n = 0; ticker = timer.every(0.005, function() n = n + 1 end)")
        _ = await repl.evaluate("while n < 3 do sleep(0.005) end")
        let r = await repl.evaluate("n >= 3, ticker:running()")
        XCTAssertEqual(r, .output("true, true"))
        let listing = await repl.taskListing()
        XCTAssertTrue(listing.contains("timer every 5ms, created at repl:1"), listing)
        await repl.close()
    }

    func testCompletionUsesRawAccessOnly() async throws {
        let t = Transcript()
        let repl = try await makeREPL(t)
        _ = await repl.evaluate("tricky = setmetatable({}, { __index = function() error('ran code') end })")
        _ = await repl.evaluate("home = { entries = function() end, treatments = function() end, url = 'x' }")
        let c1 = await repl.complete(line: "string.fo", cursor: 10)
        XCTAssertEqual(c1.candidates, ["string.format"])
        let c2 = await repl.complete(line: "x = home:", cursor: 10)
        XCTAssertEqual(c2.candidates, ["home:entries", "home:treatments"])
        let c3 = await repl.complete(line: "tricky.a", cursor: 9)
        XCTAssertEqual(c3.candidates, [])
        let c4 = await repl.complete(line: "ti", cursor: 3)
        XCTAssertTrue(c4.candidates.contains("timer"), "\(c4)")
        await repl.close()
    }

    func testHelpShowsStubText() async throws {
        let t = Transcript()
        let repl = try await makeREPL(t)
        _ = await repl.evaluate("help(timer.after)")
        _ = await repl.evaluate("help 'task'")
        let text = t.lines.joined(separator: "\n")
        XCTAssertTrue(text.contains("timer.after(delay, fn, ...)"), text)
        XCTAssertTrue(text.contains("Runs `fn(...)` once after `delay`."), text)
        XCTAssertTrue(text.contains("task.spawn"), text)
        await repl.close()
    }

    func testCancelLine() async throws {
        let t = Transcript()
        let repl = try await makeREPL(t)
        async let result = repl.evaluate("sleep(60)")
        // Wait until the line is parked on its sleep, then cancel it.
        while !(await repl.withEngine { $0.liveTasks.contains { $0.waitingFor?.hasPrefix("sleep") == true } }) {
            await Task.yield()
        }
        let cancelled = await repl.cancelLine()
        XCTAssertTrue(cancelled)
        let r = await result
        XCTAssertEqual(r, .error("cancelled"))
        let after = await repl.evaluate("'still here'")
        XCTAssertEqual(after, .output(#""still here""#))
        await repl.close()
    }
}
