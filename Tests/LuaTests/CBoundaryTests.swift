import Foundation
import Lua
import LookoutTestSupport
import XCTest

/// The C boundary: stack space for every push from Swift, no metamethod run from Swift outside a
/// protected call, and a prelude that scripts cannot break by replacing globals.
final class CBoundaryTests: XCTestCase {
    // MARK: Stack space

    /// `task.spawn` moves its arguments onto the new thread after asking for room; it used to
    /// copy them onto the caller's stack without `lua_checkstack`.
    func testSpawnWithManyArgumentsWorks() async throws {
        let (t, outcome) = try await runLua("""
            local function count(...) return select('#', ...), (select(select('#', ...), ...)) end
            for _, n in ipairs { 250, 5000, 200000 } do
              local args = {}
              for i = 1, n do args[i] = i end
              local ok, got, last = task.wait(task.spawn(count, table.unpack(args)))
              print(n, ok, got, last)
            end
            local big = {}
            for i = 1, 100000 do big[i] = i end
            local h = timer.after(0, function(...) print("timer", select('#', ...)) end, table.unpack(big))
            local results = table.pack(task.wait(task.spawn(function() return table.unpack(big) end)))
            print("results", results.n, results[results.n])
            """)
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(t.lines, [
            "250\ttrue\t250\t250", "5000\ttrue\t5000\t5000", "200000\ttrue\t200000\t200000",
            "results\t100001\t100000", "timer\t100000",
        ])
    }

    // MARK: Metamethods

    /// Raising `__index`/`__newindex` on every table a script can reach: the script sees Lua
    /// errors, bindings keep working, and the host's own global and module writes (raw) neither
    /// run them nor longjmp out of Swift.
    func testRaisingMetatablesOnReachableTablesCannotCrashTheHost() async throws {
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript))
        try await runtime.start()
        let outcome = await runtime.run(source: Array("""
            local setmetatable, print, pcall, tostring, json, task, timer, sleep, require, string =
              setmetatable, print, pcall, tostring, json, task, timer, sleep, require, string
            local package = package
            local mt = {
              __index = function(_, k) error("index " .. tostring(k)) end,
              __newindex = function(_, k) error("newindex " .. tostring(k)) end,
            }
            for _, t in ipairs { _G, package.loaded, package.preload, json, task, timer, string, table, coroutine, math } do
              setmetatable(t, mt)
            end
            sleep(0)
            local h = task.spawn(function(a) return a * 2 end, 21)
            print("spawn", task.wait(h))
            local fired
            timer.after(0, function() fired = true end)
            sleep(0.001)
            print("timer", fired)
            print("json", json.encode({ 1, 2 }), json.decode("[3]")[1])
            print("require", pcall(require, "nothing.here"))
            print("error", pcall(task.wait, h, -1))
            """.utf8), chunkName: "@hostile.lua")
        XCTAssertEqual(outcome.exitCode, 0, "\(transcript.errors)")
        // The host writes globals and registers modules after the script ran.
        let globals = try await runtime.withEngine { engine -> [String] in
            let stack = LuaStack(engine.L)
            stack.push("set by the host")
            engine.setGlobal("from_host")
            // `require` itself meets the raising package.loaded: a Lua error, caught and thrown.
            let registered: String
            do { try engine.register(module: GlobalModule()); registered = "registered" } catch { registered = "\(error)" }
            stack.rawGlobal("from_host")
            defer { stack.pop() }
            return [stack.string(at: -1) ?? "?", registered]
        }
        await runtime.close()
        XCTAssertEqual(globals.first, "set by the host")
        XCTAssertTrue(globals.last == "registered" || globals.last?.contains("index hostmod") == true, "\(globals)")
        let lines = transcript.lines
        XCTAssertEqual(lines.first, "spawn\ttrue\t42")
        XCTAssertTrue(lines.contains("timer\ttrue"), "\(lines)")
        XCTAssertTrue(lines.contains("json\t[1,2]\t3"), "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("require\tfalse\t") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("error\tfalse\t") && $0.contains("bad argument #2 to 'task.wait'") }, "\(lines)")
    }

    // MARK: Prelude

    /// The prelude captured the coroutine functions before the script ran: replacing them does
    /// not wedge a task ("internal error: script.sleep waits twice").
    func testReplacingCoroutineFunctionsDoesNotWedgeTasks() async throws {
        let (t, outcome) = try await runLua("""
            local wrap = coroutine.wrap
            coroutine.status = function() return "dead" end
            coroutine.isyieldable = function() return false end
            coroutine.yield = function() error("replaced yield") end
            coroutine.close = function() error("replaced close") end
            tostring = function() error("replaced tostring") end
            table.unpack = function() error("replaced unpack") end
            table.pack = function() error("replaced pack") end
            select = function() error("replaced select") end
            local f = wrap(function(x) sleep(0.001) return x + 1 end)
            print(f(1))
            local co = coroutine.create(function() sleep(0.001) return "resumed" end)
            print(coroutine.resume(co))
            sleep(0.001)
            print("again", task.wait(task.spawn(function() sleep(0.001) return 3 end)))
            local ok, results = task.all({ task.spawn(function() return 4 end) })
            print("all", ok, results[1][1])
            """)
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(t.lines, ["2", "true\tresumed", "again\ttrue\t3", "all\ttrue\t4"])
    }

    // MARK: By construction

    /// Swift calls no Lua API function that can run a metamethod or raise: those go through
    /// `shim_*` helpers or raw access (`LuaStack.rawField`, `setField`, `setGlobal`).
    func testSwiftCallsNoRaisingLuaAPI() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let forbidden = [
            "lua_getfield", "lua_setfield", "lua_getglobal", "lua_setglobal", "lua_gettable", "lua_settable",
            "lua_geti", "lua_seti", "lua_len", "luaL_len", "lua_concat", "lua_arith", "lua_compare", "lua_call",
            "lua_callk", "lua_pcall", "lua_pcallk", "lua_error", "luaL_error", "luaL_tolstring", "luaL_callmeta",
            "luaL_dostring", "lua_yield", "lua_yieldk", "luaL_checkstack", "luaL_checkinteger", "luaL_checknumber",
            "luaL_checklstring", "luaL_checktype", "luaL_checkudata", "luaL_checkany", "luaL_optinteger",
            "luaL_optnumber", "luaL_optlstring", "luaL_argerror", "luaL_typeerror",
        ]
        // lookout-bench's plain state is the baseline of a benchmark: no script controls it.
        let allowed: Set<String> = ["Lua/PlainLuaState.swift"]
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: sources.path)
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".swift"), !allowed.contains(relative) else { continue }
            let text = try String(contentsOfFile: sources.path + "/" + relative, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.components(separatedBy: "//").first ?? ""
                guard code.contains("lua") else { continue }
                for name in forbidden where code.contains(name + "(")
                    && code.range(of: "\\b\(name)\\(", options: .regularExpression) != nil {
                    found.append("\(relative):\(n + 1): \(name)")
                }
            }
        }
        XCTAssertEqual(found, [])
    }
}

/// A module that is a global (registered after a script ran, in the metatable test).
private struct GlobalModule: LuaModule {
    let name = "hostmod"
    let isGlobal = true
    let stub = "---@meta hostmod\nlocal hostmod = {}\nreturn hostmod\n"
    func push(into engine: LuaEngine, stack: LuaStack) throws {
        stack.pushTable()
    }
}
