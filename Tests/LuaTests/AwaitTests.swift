import Lua
import LookoutTestSupport
import XCTest

final class AwaitTests: XCTestCase {
    let kit: [any LuaModule] = [TestKitModule()]

    func testThousandConcurrentTasksAwaitingSwiftFinishTogether() async throws {
        let (t, outcome) = try await runLua("""
            local kit = require "testkit"
            local script = require "script"
            local done, t0 = 0, script.uptime()
            local tasks = {}
            for i = 1, 1000 do
              tasks[i] = task.spawn(function() kit.swift_sleep(0.2); done = done + 1 end)
            end
            local ok = task.all(tasks)
            local elapsed = script.uptime() - t0
            -- one after the other they would take 200 s
            print("done", done, ok, elapsed >= 0.2 and elapsed < 10)
            """, modules: kit)
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(t.lines, ["done\t1000\ttrue\ttrue"])
        XCTAssertEqual(outcome.exitCode, 0)
    }

    func testAwaitInsidePcallIteratorAndCoroutineWrap() async throws {
        let (t, _) = try await runLua("""
            local kit = require "testkit"
            print("pcall", pcall(kit.swift_sleep, 0.001))
            print("error", select(2, kit.swift_sleep(0.001, true)).code)
            local function gen()
              return coroutine.wrap(function()
                for i = 1, 3 do coroutine.yield(kit.swift_sleep(i / 1000) * 1000) end
              end)
            end
            local got = {}
            for v in gen() do got[#got + 1] = v end
            print("wrap", table.concat(got, ","))
            local function iter(_, i) if i < 3 then kit.swift_sleep(0.001); return i + 1 end end
            local n = 0
            for i in iter, nil, 0 do n = n + i end
            print("iterator", n)
            local co = coroutine.create(function(a) local b = kit.swift_sleep(0.001); return a, b end)
            print("resume", coroutine.resume(co, "x"))
            """, modules: kit)
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(t.lines, [
            "pcall\ttrue\t0.001", "error\ttest", "wrap\t1.0,2.0,3.0", "iterator\t6", "resume\ttrue\tx\t0.001",
        ])
    }

    func testClearErrorWhereLuaCannotYield() async throws {
        let (t, _) = try await runLua("""
            local kit = require "testkit"
            local ok, err = pcall(table.sort, {3, 1, 2}, function(a, b) kit.swift_sleep(0.001); return a < b end)
            print(ok, err)
            local ok2, err2 = pcall(string.gsub, "abc", "%w", function(c) kit.swift_sleep(0.001) end)
            print(ok2, err2)
            local ok3, err3 = pcall(table.sort, {3, 1, 2}, function(a, b)
              local f = coroutine.wrap(function() return kit.swift_sleep(0.001) end)
              f()
              return a < b
            end)
            print(ok3, err3)
            """, modules: kit)
        XCTAssertEqual(t.lines.count, 3)
        XCTAssertTrue(t.lines[0].hasPrefix("false\ttest.lua:2: testkit.swift_sleep cannot wait here"), t.lines[0])
        XCTAssertTrue(t.lines[0].contains("table.sort comparator"), t.lines[0])
        XCTAssertTrue(t.lines[1].hasPrefix("false\ttest.lua:4: testkit.swift_sleep cannot wait here"), t.lines[1])
        XCTAssertTrue(t.lines[2].contains("cannot wait inside this coroutine"), t.lines[2])
    }

    func testRequireTopLevelCannotWait() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-req-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "require('testkit').swift_sleep(0.001)\nreturn {}".write(to: dir.appendingPathComponent("mod.lua"), atomically: true, encoding: .utf8)
        try "local M = {}\nfunction M.get() return require('testkit').swift_sleep(0.001) end\nreturn M".write(
            to: dir.appendingPathComponent("lazy.lua"), atomically: true, encoding: .utf8)
        let (t, _) = try await runLua("""
            print(pcall(require, "mod"))
            print(require("lazy").get())
            """, modules: kit) { $0.scriptDirectory = dir.path }
        XCTAssertEqual(t.lines.count, 2)
        XCTAssertTrue(t.lines[0].contains("cannot wait here"), t.lines[0])
        XCTAssertTrue(t.lines[0].contains("top level of a required file"), t.lines[0])
        XCTAssertEqual(t.lines[1], "0.001")
    }

    func testTaskWaitAllCancelAndTimeout() async throws {
        let (t, outcome) = try await runLua("""
            local kit = require "testkit"
            local a = task.spawn(function(x) kit.swift_sleep(0.01); return x * 2, "a" end, 21)
            print(task.wait(a))
            local b = task.spawn(function() error("broken") end)
            local ok, err = b:wait()
            print(ok, err.code, err.message)
            local slow = task.spawn(function() kit.swift_sleep(5) end)
            local ok2, err2 = task.wait(slow, 0.01)
            print(ok2, err2.code, slow:status())
            print(slow:cancel(), slow:status())
            local ok3, err3 = slow:wait()
            print(ok3, err3.code)
            local all_ok, results = task.all({ task.spawn(function() return 1 end), task.spawn(function() return 2 end) })
            print(all_ok, results[1][1], results[2][1])
            """, modules: kit)
        XCTAssertEqual(t.errors.map(\.description), [], "an error someone waited for is not reported again")
        XCTAssertEqual(t.lines, [
            "true\t42\ta", "false\tfailed\ttest.lua:4: broken", "false\ttimeout\twaiting", "true\tcancelled",
            "false\tcancelled", "true\t1\t2",
        ])
        XCTAssertEqual(outcome.exitCode, 0)
    }
}
