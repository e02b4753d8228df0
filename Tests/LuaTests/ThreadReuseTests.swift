import Lua
import LookoutTestSupport
import XCTest

/// A handler per event (`spawnCall(…, reusesThreads: true)`, as Signal K's `boat:on` runs) runs
/// on a thread an earlier call returned from without waiting: nothing of that call may be seen.
final class ThreadReuseTests: XCTestCase {
    /// Results left behind, a thread handed out by `coroutine.running()`, an error with a `<close>`
    /// variable: the next calls get no extra arguments, the handed-out thread stays dead, and the
    /// threads of clean calls are reused.
    func testReusedThreadsCarryNothingOver() async throws {
        let (t, outcome) = try await runLua("""
            local testkit = require "testkit"
            local function handler(i, ...)
              print(("call %d args %d"):format(i, select('#', ...)))
              if i == 1 then
                local secret = "s1"
                return secret, secret, {}, function() return secret end  -- results the next call must not get
              elseif i == 2 then
                stash = coroutine.running()
              elseif i == 3 then
                print("stash " .. coroutine.status(stash))
              elseif i == 4 then
                local c <close> = setmetatable({}, { __close = function() print("closed 4") end })
                error("boom")
              elseif i == 6 then
                print("reused " .. testkit.reused_threads())
              end
            end
            testkit.spawn_each(handler, 6)
            """, modules: [TestKitModule()])
        XCTAssertEqual(t.lines, [
            "call 1 args 0", "call 2 args 0", "call 3 args 0", "stash dead", "call 4 args 0", "closed 4",
            "call 5 args 0", "call 6 args 0",
            // 2 took 1's thread; 3 a new one (2's was handed out); 4 took 3's; 5 a new one (4 failed); 6 took 5's
            "reused 3",
        ])
        XCTAssertEqual(t.errors.map(\.message), ["test.lua:13: boom"])
        XCTAssertEqual(outcome.exitCode, 1)
    }

    /// Under `--trusted`, where `debug` reaches locals and hooks: a hook a handler sets is not
    /// there in later calls, and a later call sees only its own frame and locals.
    func testHooksAndLocalsDoNotCarryOverTrusted() async throws {
        let (t, outcome) = try await runLua("""
            local testkit = require "testkit"
            local function handler(i)
              local secret = "secret of call " .. i
              print(("call %d hook %s"):format(i, tostring(debug.gethook())))
              local found, levels = {}, 0
              while debug.getinfo(levels + 1, "f") do
                levels = levels + 1
                for k = 1, 50 do
                  local name, value = debug.getlocal(levels, k)
                  if not name then break end
                  if type(value) == "string" and value:match("^secret of call") and value ~= secret then
                    found[#found + 1] = value
                  end
                end
              end
              print(("call %d levels %d foreign %d"):format(i, levels, #found))
              if i == 1 then debug.sethook(function() end, "l") end  -- left behind on purpose
              if i == 4 then print("reused " .. testkit.reused_threads()) end
            end
            testkit.spawn_each(handler, 4)
            """, modules: [TestKitModule()]) { $0.trusted = true }
        XCTAssertEqual(t.lines, [
            "call 1 hook nil", "call 1 levels 1 foreign 0",
            "call 2 hook nil", "call 2 levels 1 foreign 0",
            "call 3 hook nil", "call 3 levels 1 foreign 0",
            "call 4 hook nil", "call 4 levels 1 foreign 0",
            // 1's thread keeps its hook and is not reused: 3 took 2's, 4 took 3's
            "reused 2",
        ])
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
    }

    /// Handlers cancelled before they started end without ever taking a thread.
    func testPendingHandlersCancelledBeforeStarting() async throws {
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript))
        try await runtime.start()
        let left = try await runtime.withEngine { engine -> Int in
            let stack = LuaStack(engine.L)
            try stack.load(Array("print('ran', ...)".utf8), name: "=handler", what: "test")
            for i in 1...100 {
                engine.spawnCall(of: -1, on: stack, label: "handler", reusesThreads: true) { target in
                    target.push(i)
                    return 1
                }
            }
            stack.pop()
            engine.cancelAll()
            return engine.liveTasks.count
        }
        await runtime.close()
        XCTAssertEqual(left, 0)
        XCTAssertEqual(transcript.lines, [])
        XCTAssertEqual(transcript.errors.count, 0, "\(transcript.errors)")
    }

    /// A handler that waits keeps its thread to itself.
    func testWaitingHandlerThreadIsNotReused() async throws {
        let (t, outcome) = try await runLua("""
            local testkit = require "testkit"
            testkit.spawn_each(function(i)
              if i == 1 then testkit.swift_sleep(0.001) end
              print(("call %d reused %d"):format(i, testkit.reused_threads()))
            end, 3)
            """, modules: [TestKitModule()])
        // 2 and 3 run while 1 waits: 2 on a new thread, 3 on 2's; 1's thread is not pooled after its wait
        XCTAssertEqual(t.lines, ["call 2 reused 0", "call 3 reused 1", "call 1 reused 1"])
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
    }
}
