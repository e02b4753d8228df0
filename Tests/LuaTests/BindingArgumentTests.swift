import Lua
import LookoutTestSupport
import XCTest

/// A binding's integer and number arguments are read straight from the stack when the shim's
/// start-up probe allows it (`shim_direct_args`), through the API otherwise: both ways keep the
/// binding contract (no string becomes a number, a float needs an integer value, a missing
/// argument is "no value").
final class BindingArgumentTests: XCTestCase {
    static let cases = #"""
        local testkit = require "testkit"
        local results = {}
        local function try(label, f, ...)
          local ok, v = pcall(f, ...)
          results[#results + 1] = label .. " " .. (ok and math.type(v) .. " " .. tostring(v) or v:gsub("^[^:]*:%d+: ", ""))
        end
        local args = testkit.args
        try("int", args, "integer", 1, 42)
        try("negative", args, "integer", 1, math.mininteger)
        try("integral float", args, "integer", 1, 2.0)
        try("fraction", args, "integer", 1, 2.5)
        try("huge float", args, "integer", 1, 2^63)
        try("string", args, "integer", 1, "12")
        try("boolean", args, "integer", 1, true)
        try("nil", args, "integer", 1, nil)
        try("none", args, "integer", 1)
        try("tenth", args, "integer", 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
        try("beyond", args, "integer", 11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
        try("number int", args, "number", 1, 7)
        try("number float", args, "number", 1, 0.5)
        try("number string", args, "number", 1, "0.5")
        try("number table", args, "number", 1, {})
        local p = testkit.probe("p")
        try("method", p.add, p, 40, 2)
        try("method string", p.add, p, "40", 2)
        try("in coroutine", coroutine.wrap(function() return args("integer", 1, 5) end))
        try("from metamethod", function() return setmetatable({}, { __index = function(_, k) return args("integer", 1, k) end })[9] end)
        print(table.concat(results, "\n"))
        """#

    static let expected = [
        "int integer 42",
        "negative integer \(Int64.min)",
        "integral float integer 2",
        "fraction bad argument #3 to 'testkit.args' (number has no integer representation)",
        "huge float bad argument #3 to 'testkit.args' (number has no integer representation)",
        "string bad argument #3 to 'testkit.args' (integer expected, got string)",
        "boolean bad argument #3 to 'testkit.args' (integer expected, got boolean)",
        "nil bad argument #3 to 'testkit.args' (integer expected, got nil)",
        "none bad argument #3 to 'testkit.args' (integer expected, got no value)",
        "tenth integer 10",
        "beyond bad argument #13 to 'testkit.args' (integer expected, got no value)",
        "number int float 7.0",
        "number float float 0.5",
        "number string bad argument #3 to 'testkit.args' (number expected, got string)",
        "number table bad argument #3 to 'testkit.args' (number expected, got table)",
        "method integer 42",
        "method string bad argument #1 to 'probe:add' (integer expected, got string)",
        "in coroutine integer 5",
        "from metamethod integer 9",
    ]

    func testDirectReadsKeepTheContract() async throws {
        LuaEngine.directArgumentReads = true
        XCTAssertTrue(LuaEngine.directArgumentReads, "the start-up probe refused direct reads of this liblua5.4")
        let (t, outcome) = try await runLua(Self.cases, modules: [TestKitModule()])
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines.joined(separator: "\n").split(separator: "\n").map(String.init), Self.expected)
    }

    func testAPIReadsKeepTheContract() async throws {
        LuaEngine.directArgumentReads = false
        defer { LuaEngine.directArgumentReads = true }
        XCTAssertFalse(LuaEngine.directArgumentReads)
        let (t, outcome) = try await runLua(Self.cases, modules: [TestKitModule()])
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines.joined(separator: "\n").split(separator: "\n").map(String.init), Self.expected)
    }
}
