import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutModules

/// `store` and the `StateStore` under it.
final class StoreModuleTests: XCTestCase {
    private var directory: String!

    override func setUp() async throws {
        directory = NSTemporaryDirectory() + "lookout-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `source` as script `name` over `store`; fails on any script error.
    private func run(
        _ source: String, store: StateStore, name: String = "test.lua", file: StaticString = #filePath, line: UInt = #line
    ) async throws -> [String] {
        let (transcript, outcome) = try await runLua(
            "local store = require 'store'\n" + source, name: name, modules: [StoreModule(store: store)])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    // MARK: Values

    func testEveryValueKindRoundTrips() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local values = {
              maxint = math.maxinteger, minint = math.mininteger, zero = 0, float = 0.1, whole = 2.0,
              huge = 1e300, tiny = 5e-324, negative = -1.5,
              text = "héllo \\"quoted\\" \\n line", bytes = "\\0\\255\\254 raw", empty_text = "",
              yes = true, no = false, null = json.null,
              list = { 1, "two", 3.5, json.null, { nested = true } },
              empty_list = json.empty_array, empty_object = {},
              marked = setmetatable({}, json.array_mt),
              object = { a = { b = { c = { 1, 2, { d = "deep" } } } }, ["odd key"] = 1 },
            }
            for key, value in pairs(values) do assert(store.set(key, value)) end
            local names = {}
            for key in pairs(values) do names[#names + 1] = key end
            table.sort(names)
            for _, key in ipairs(names) do
              local got = store.get(key)
              local same = json.encode(got, { sort_keys = true }) == json.encode(values[key], { sort_keys = true })
              print(key, same, math.type(got) or type(got), rawequal(got, json.null))
            end
            print(store.get("bytes") == "\\0\\255\\254 raw", store.get("minint") == math.mininteger)
            print(json.encode(store.get("empty_list")), json.encode(store.get("marked")), json.encode(store.get("empty_object")))
            """, store: store)
        XCTAssertEqual(lines, [
            "bytes\ttrue\tstring\tfalse",
            "empty_list\ttrue\ttable\tfalse",
            "empty_object\ttrue\ttable\tfalse",
            "empty_text\ttrue\tstring\tfalse",
            "float\ttrue\tfloat\tfalse",
            "huge\ttrue\tfloat\tfalse",
            "list\ttrue\ttable\tfalse",
            "marked\ttrue\ttable\tfalse",
            "maxint\ttrue\tinteger\tfalse",
            "minint\ttrue\tinteger\tfalse",
            "negative\ttrue\tfloat\tfalse",
            "no\ttrue\tboolean\tfalse",
            "null\ttrue\tuserdata\ttrue",
            "object\ttrue\ttable\tfalse",
            "text\ttrue\tstring\tfalse",
            "tiny\ttrue\tfloat\tfalse",
            "whole\ttrue\tfloat\tfalse",
            "yes\ttrue\tboolean\tfalse",
            "zero\ttrue\tinteger\tfalse",
            "true\ttrue",
            "[]\t[]\t{}",
        ])
    }

    func testGetDefaultSetNilDeleteAndAll() async throws {
        let store = try StateStore()
        let lines = try await run("""
            print(store.get("missing"), store.get("missing", 42), store.get("missing", false))
            local default = { x = 1 }
            print(store.get("missing", default) == default)
            assert(store.set("a", 1)); assert(store.set("b", { 2 })); assert(store.set("c", "three"))
            print(store.set("a", nil), store.get("a", "gone"))
            print(store.delete("b"), store.delete("never"), store.get("b"))
            local all = store.all()
            print(json.encode(all, { sort_keys = true }))
            assert(store.set("d", json.null))
            print(json.encode(store.all(), { sort_keys = true }))
            """, store: store)
        XCTAssertEqual(lines, [
            "nil\t42\tfalse",
            "true",
            "true\tgone",
            "true\ttrue\tnil",
            "{\"c\":\"three\"}",
            "{\"c\":\"three\",\"d\":null}",
        ])
    }

    func testKeysSortedWithPrefix() async throws {
        let store = try StateStore()
        let lines = try await run("""
            for _, key in ipairs { "b", "a", "alert.low", "alert.high", "alerts", "ä", "Z", "alert" } do
              assert(store.set(key, true))
            end
            print(table.concat(store.keys(), " "))
            print(table.concat(store.keys("alert."), " "))
            print(table.concat(store.keys("alert"), " "))
            print(#store.keys("nothing"), json.encode(store.keys("nothing")))
            """, store: store)
        XCTAssertEqual(lines, [
            "Z a alert alert.high alert.low alerts b ä",
            "alert.high alert.low",
            "alert alert.high alert.low alerts",
            "0\t[]",
        ])
    }

    // MARK: Scripts and files

    func testScriptsAreIsolated() async throws {
        let store = try StateStore()
        _ = try await run(#"assert(store.set("x", "from a")) assert(store.set("only.a", 1))"#, store: store, name: "a.lua")
        _ = try await run(#"assert(store.set("x", "from b"))"#, store: store, name: "b.lua")
        let a = try await run(#"print(store.get("x"), table.concat(store.keys(), ","))"#, store: store, name: "a.lua")
        let b = try await run(#"print(store.get("x"), table.concat(store.keys(), ","), store.get("only.a"))"#, store: store, name: "b.lua")
        XCTAssertEqual(a, ["from a\tonly.a,x"])
        XCTAssertEqual(b, ["from b\tx\tnil"])
    }

    func testValuesPersistAcrossRuntimesAndStores() async throws {
        let path = directory + "/lookout.sqlite3"
        do {
            let first = try StateStore(path: path)
            _ = try await run("""
                assert(store.set("count", math.maxinteger))
                assert(store.set("list", { 1, 2, { a = json.null } }))
                """, store: first)
        }
        let second = try StateStore(path: path)
        XCTAssertFalse(second === (try StateStore.shared(path: directory + "/other.sqlite3")))
        let lines = try await run("""
            print(store.get("count") == math.maxinteger, json.encode(store.get("list")))
            """, store: second)
        XCTAssertEqual(lines, ["true\t[1,2,{\"a\":null}]"])
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600, file)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + "-wal"), "WAL mode")
    }

    func testCorruptFileIsNamedInTheError() throws {
        let path = directory + "/lookout.sqlite3"
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try StateStore(path: path)) { error in
            let text = String(describing: error)
            XCTAssertTrue(text.hasPrefix("state database \(path): "), text)
            XCTAssertTrue(text.contains("not a valid Lookout database"), text)
        }
    }

    func testUnopenableDatabaseIsAnErrValue() async throws {
        let blocker = directory + "/file"
        XCTAssertTrue(FileManager.default.createFile(atPath: blocker, contents: Data()))
        let paths = LookoutPaths(configFile: directory + "/config.toml", stateDirectory: blocker + "/state")
        let (transcript, _) = try await runLua("""
            local value, err = require("store").get("k")
            print(value, err.code, err.message:find("state database", 1, true) ~= nil)
            """, modules: [StoreModule(paths: paths)])
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(transcript.lines, ["nil\tstore\ttrue"])
    }

    // MARK: Quota

    /// `[limits] store` caps what one script keeps (keys and values); a write over it is
    /// `nil, err` naming the limit and the config key, and writes nothing; rewriting or deleting
    /// still works; other scripts have their own quota; `store.update` is held to it too.
    func testStoreQuotaFromConfigRefusesGrowthOverIt() async throws {
        let config = try HostConfig(text: "[limits]\nstore = \"1MB\"\n")
        XCTAssertEqual(config.limits.storeBytes, 1 << 20)
        let store = try StateStore(path: directory + "/state.sqlite3")
        let modules: [any LuaModule] = [StoreModule(store: store, quota: config.limits.storeQuota)]
        let (t, outcome) = try await runLua("""
            local store = require 'store'
            local chunk = string.rep("x", 300 * 1024)
            for i = 1, 4 do
              local ok, err = store.set("k" .. i, chunk)
              print(i, ok, err and err.code, err and err.message)
            end
            print(store.get("k4"), #store.keys())
            print(store.set("k1", string.rep("y", 300 * 1024)))          -- same size: allowed
            print(store.update("k2", function(old) return old .. old end)) -- grows: refused
            print(store.delete("k3"), store.set("k4", chunk))              -- room again
            """, name: "hog.lua", modules: modules)
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(t.lines.count, 8, "\(t.lines)")
        XCTAssertEqual(Array(t.lines.prefix(3)), ["1\ttrue\tnil\tnil", "2\ttrue\tnil\tnil", "3\ttrue\tnil\tnil"])
        XCTAssertTrue(t.lines[3].hasPrefix("4\tnil\tquota\tstore quota exceeded"), t.lines[3])
        XCTAssertTrue(t.lines[3].contains("hog.lua"), t.lines[3])
        XCTAssertTrue(t.lines[3].contains("1 MiB"), t.lines[3])
        XCTAssertTrue(t.lines[3].contains("limits.store in config.toml"), t.lines[3])
        XCTAssertEqual(t.lines[4], "nil\t3")
        XCTAssertEqual(t.lines[5], "true")
        XCTAssertTrue(t.lines[6].hasPrefix("nil\tstore quota exceeded"), t.lines[6])
        XCTAssertEqual(t.lines[7], "true\ttrue")

        // Another script has its own quota.
        let (other, _) = try await runLua("print(require('store').set('k', string.rep('z', 900 * 1024)))",
                                          name: "other.lua", modules: modules)
        XCTAssertEqual(other.lines, ["true"])
    }

    /// The default quota (10 MiB) stops the 12 values of 20 MB that once made a 261 MB database.
    func testDefaultStoreQuotaStopsAHugeDatabase() async throws {
        let path = directory + "/state.sqlite3"
        let store = try StateStore(path: path)
        let (t, _) = try await runLua("""
            local store = require 'store'
            local big = string.rep("x", 20 * 1000 * 1000)
            local stored = 0
            for i = 1, 12 do
              local ok, err = store.set("v" .. i, big)
              if ok then stored = stored + 1 else print(err.code); break end
              collectgarbage()
            end
            print(stored)
            """, name: "big.lua", modules: [StoreModule(store: store, quota: HostConfig().limits.storeQuota)]) {
            $0.memoryLimit = 256 << 20
        }
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(t.lines, ["quota", "0"])
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        XCTAssertLessThan(size, 11 << 20, "database size")
    }

    func testStoreQuotaConfigValues() throws {
        XCTAssertEqual(HostConfig().limits.storeBytes, 10 << 20)
        XCTAssertNil(try HostConfig(text: "[limits]\nstore = \"none\"\n").limits.storeBytes)
        XCTAssertNil(try HostConfig(text: "[limits]\nstore = 0\n").limits.storeBytes)
        XCTAssertEqual(try HostConfig(text: "[limits]\nstore = \"512KB\"\n").limits.storeBytes, 512 << 10)
        XCTAssertThrowsError(try HostConfig(text: "[limits]\nstore = true\n")) { error in
            XCTAssertTrue("\(error)".contains("limits.store: expected a size"), "\(error)")
        }
    }

    // MARK: update

    func testUpdate() async throws {
        let store = try StateStore()
        let lines = try await run("""
            print(store.update("n", function(old) return (old or 0) + 1 end))
            print(store.update("n", function(old) return old * 10 end), store.get("n"))
            print(store.update("n", function() return nil end), store.get("n", "deleted"))
            local ok, err = pcall(store.update, "n", function() error("boom", 0) end)
            print(ok, err, store.get("n", "unchanged"))
            print(store.update("n", function(old) return { was = old or "nothing" } end).was)
            """, store: store)
        XCTAssertEqual(lines, ["1", "10\t10", "nil\tdeleted", "false\tboom\tunchanged", "nothing"])
        XCTAssertTrue(StoreUpdateLocks.shared.isIdle)
    }

    func testConcurrentUpdatesLoseNothing() async throws {
        let store = try StateStore()
        let script = """
            local store = require "store"
            local handles = {}
            for i = 1, 20 do
              handles[i] = task.spawn(function()
                return store.update("counter", function(old)
                  task.yield()  -- let the other tasks run while this one holds the key
                  local n = store.get("other", 0)  -- waits inside fn
                  return (old or 0) + 1
                end)
              end)
            end
            for i = 1, 20 do
              local ok, value = task.wait(handles[i])
              assert(ok and math.type(value) == "integer", tostring(value))
            end
            """
        // Two runtimes of the same script at once, sharing the store and its locks.
        let modules: [any LuaModule] = [StoreModule(store: store)]
        async let first = runLua(script, modules: modules)
        async let second = runLua(script, modules: modules)
        for (transcript, outcome) in try await [first, second] {
            XCTAssertEqual(transcript.errors.map(\.description), [])
            XCTAssertEqual(outcome.exitCode, 0)
        }
        let lines = try await run(#"print(store.get("counter"))"#, store: store)
        XCTAssertEqual(lines, ["40"])
        XCTAssertTrue(StoreUpdateLocks.shared.isIdle)
    }

    func testUpdateRetriesWhenTheValueChangedMeanwhile() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local calls = 0
            print(store.update("k", function(old)
              calls = calls + 1
              if calls == 1 then assert(store.set("k", 100)) end  -- changed behind update's back
              return (old or 0) + 1
            end), calls)
            """, store: store)
        XCTAssertEqual(lines, ["101\t2"])
    }

    func testCancelledUpdateReleasesItsLock() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local t = task.spawn(function()
              store.update("k", function() sleep(3600) return "never" end)
            end)
            task.yield()  -- t takes the lock and waits (on the database or in fn)
            t:cancel()
            print(t:status(), store.update("k", function(old) return old or "free" end))
            """, store: store)
        XCTAssertEqual(lines, ["cancelled\tfree"])
        XCTAssertTrue(StoreUpdateLocks.shared.isIdle)
    }

    // MARK: Errors

    func testProgrammerErrorsRaise() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local function try(f, ...) print(select(2, pcall(f, ...))) end
            try(store.get, 42)
            try(store.get, "")
            try(store.set, "k", { a = { b = print } })
            try(store.set, "k", { 1, 2, [1000] = 3 })
            try(store.set, {}, 1)
            try(store.delete)
            try(store.keys, 5)
            try(store.update, "k")
            try(store.update, 1, function() end)
            try(store.update, "k", function() return { f = print } end)
            store.update("k", function()
              try(store.update, "k", function() end)
              return 1
            end)
            print(store.get("k"))
            table.sort({ 2, 1 }, function(a, b)
              try(store.update, "k", function() end)
              return a < b
            end)
            """, store: store)
        XCTAssertEqual(lines, [
            "bad argument #1 to 'store.get' (string expected, got number)",
            "bad argument #1 to 'store.get' (key must be 1 to 1024 bytes long)",
            "bad argument #2 to 'store.set' (value is not JSON-encodable: cannot encode function at $.a.b)",
            "bad argument #2 to 'store.set' (value is not JSON-encodable: excessively sparse array at $)",
            "bad argument #1 to 'store.set' (string expected, got table)",
            "bad argument #1 to 'store.delete' (string expected, got no value)",
            "bad argument #1 to 'store.keys' (string expected, got number)",
            "bad argument #2 to 'store.update' (function expected, got no value)",
            "bad argument #1 to 'store.update' (string expected, got number)",
            "store.update: the function returned a value that is not JSON-encodable: cannot encode function at $.f",
            "store.update: \"k\" is already being updated by this task (a nested store.update of the same key would wait for itself)",
            "1",
            "store.update cannot wait here: it was called from code that cannot yield (a table.sort comparator, a string.gsub callback, __tostring, __gc, or the top level of a required file); call it from the script body, a function, or task.spawn(fn)",
        ])
        XCTAssertTrue(StoreUpdateLocks.shared.isIdle)
    }
}
