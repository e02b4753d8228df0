import Lua
import LookoutTestSupport
import XCTest

final class ValueTests: XCTestCase {
    let kit: [any LuaModule] = [TestKitModule()]

    func testRoundTripsKeepIntegersFloatsAndBytes() async throws {
        let (t, _) = try await runLua("""
            local kit = require "testkit"
            local function same(v) local r = kit.roundtrip(v); return r == v and math.type(r) == math.type(v) end
            print(same(math.maxinteger), same(math.mininteger), same(0.1), same(1.0), same(-0.0), same(3))
            local bytes = "\\xff\\xfe\\0\\x80 ok"
            print(kit.roundtrip(bytes) == bytes, #kit.roundtrip(bytes))
            local t = kit.roundtrip({ 1, 2, { a = json.null, b = { } } })
            print(#t, t[3].a == json.null, getmetatable(t) == json.array_mt, json.encode(t[3].b))
            print(json.encode(kit.roundtrip(setmetatable({}, json.array_mt))))
            """, modules: kit)
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(t.lines, ["true\ttrue\ttrue\ttrue\ttrue\ttrue", "true\t7", "3\ttrue\ttrue\t{}", "[]"])
    }

    func testConversionErrorsNameThePath() async throws {
        let (t, _) = try await runLua("""
            local kit = require "testkit"
            print(pcall(kit.describe, { headers = { "a", "b", print } }))
            print(pcall(kit.describe, { [true] = 1 }))
            local cycle = {}; cycle.self = cycle
            print(pcall(kit.describe, { loop = cycle }))
            local deep = {}; local d = deep; for i = 1, 150 do d.x = {}; d = d.x end
            print(pcall(kit.describe, deep))
            print(pcall(kit.describe, { ["odd key"] = { coroutine.create(print) } }))
            """, modules: kit)
        XCTAssertEqual(t.lines.count, 5)
        XCTAssertTrue(t.lines[0].hasPrefix("true\t"), "functions are kept as references: \(t.lines[0])")
        XCTAssertTrue(t.lines[0].contains("function(Lua.LuaRef(ref: "), t.lines[0])
        XCTAssertFalse(t.lines[0].contains("generation: 0"), "refs carry the state's generation")
        XCTAssertTrue(t.lines[1].contains("opts: table keys must be strings or numbers, found a boolean key"), t.lines[1])
        XCTAssertTrue(t.lines[2].contains("opts.loop.self: table contains itself (a cycle)"), t.lines[2])
        XCTAssertTrue(t.lines[3].contains("nested deeper than 100 levels"), t.lines[3])
        XCTAssertTrue(t.lines[4].contains(#"opts["odd key"][1]: cannot use a thread value here"#), t.lines[4])
    }

    func testArgumentErrorsReadLikeLua() async throws {
        let (t, _) = try await runLua("""
            print(pcall(timer.after, "soon", print))
            print(pcall(timer.after, 1, "print"))
            print(pcall(timer.every, 1, { bogus = true }, print))
            print(pcall(task.spawn))
            local h = timer.after(1, print); h:stop()
            print(pcall(h.stop))
            """)
        XCTAssertEqual(t.lines.count, 5, "\(t.lines)")
        XCTAssertTrue(t.lines[0].contains("bad argument #1 to 'timer.after' (invalid duration \"soon\""), t.lines[0])
        XCTAssertTrue(t.lines[1].contains("bad argument #2 to 'timer.after' (function expected, got string)"), t.lines[1])
        XCTAssertTrue(t.lines[2].contains("unknown option 'bogus'"), t.lines[2])
        XCTAssertTrue(t.lines[3].contains("bad argument #1 to 'task.spawn' (function expected, got no value)"), t.lines[3])
        XCTAssertTrue(t.lines[4].contains("call it with ':'"), t.lines[4])
    }
}
