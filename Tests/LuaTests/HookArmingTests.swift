import CLua
import Foundation
import Lua
import LookoutTestSupport
import XCTest

/// Issue 18 (P8): the count hook is armed only when a limit is reached, so ordinary code runs
/// without Lua's per-instruction hook trap; the limits still stop code wherever it runs
/// (LimitsTests and EscapeLimitsTests cover the rest).
final class HookArmingTests: XCTestCase {
    /// Runs `source` with `hook_armed()` (is a hook set on the calling Lua thread?) and the given
    /// CPU limit; fails instead of hanging when the run does not end within a minute.
    private func run(_ source: String, cpuLimit: Double) async throws -> (Transcript, LuaRunOutcome) {
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript, name: "hook.lua") { $0.cpuLimit = cpuLimit })
        try await runtime.start()
        await runtime.withEngine { engine in
            engine.pushFunction("hook_armed") { call in
                call.stack.push(lua_gethook(call.L) != nil)
                return .values(1)
            }
            engine.setGlobal("hook_armed")
        }
        let outcome = try await runGuarded(runtime, source, chunkName: "@hook.lua", guardSeconds: 60)
        return (transcript, outcome)
    }

    func testOrdinaryCodeRunsWithoutAHook() async throws {
        let (t, outcome) = try await run("""
            local s = 0
            for i = 1, 100000 do s = s + i end
            print("main", hook_armed())
            task.wait(task.spawn(function() print("task", hook_armed()) end))
            coroutine.wrap(function() print("coroutine", hook_armed()) end)()
            """, cpuLimit: 5)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, ["main\tfalse", "task\tfalse", "coroutine\tfalse"])
    }

    func testALoopInsideAScriptsCoroutineIsStopped() async throws {
        // The watch arms the Lua thread running now: Lookout's coroutine.resume keeps track of it.
        let (t, outcome) = try await run("""
            local co = coroutine.wrap(function() while true do end end)
            co()
            """, cpuLimit: 0.2)
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertTrue(t.errors.first?.message.contains("CPU limit exceeded") == true, "\(t.errors)")
    }

    func testACloseHandlerThatCoroutineCloseRunsIsStopped() async throws {
        // coroutine.close runs the coroutine's pending <close> handlers on that coroutine's thread.
        let (t, outcome) = try await run("""
            local co = coroutine.create(function()
              local guard <close> = setmetatable({}, { __close = function() while true do end end })
              coroutine.yield()
            end)
            coroutine.resume(co)
            print(coroutine.close(co))
            """, cpuLimit: 0.2)
        XCTAssertEqual(outcome.exitCode, 1, "\(t.lines)")
        XCTAssertTrue(t.errors.first?.message.contains("CPU limit exceeded") == true, "\(t.errors) \(t.lines)")
    }
}
