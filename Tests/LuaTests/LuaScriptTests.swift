import Foundation
import Lua
import LookoutTestSupport
import XCTest

/// Runs the Lua test files in Tests/LuaTests/lua: each `T.test_*` function runs as its own task.
final class LuaScriptTests: XCTestCase {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("lua")

    func runLuaTestFile(_ file: String, configure: (inout LuaOptions) -> Void = { _ in }) async throws {
        let source = try String(contentsOf: LuaScriptTests.folder.appendingPathComponent(file), encoding: .utf8)
        let driver = """
            local source = ...
            local chunk = assert(load(source, "@\(file)", "t"))
            local T = chunk()
            local names = {}
            for name, fn in pairs(T) do
              if type(fn) == "function" and name:match("^test_") then names[#names + 1] = name end
            end
            table.sort(names)
            local passed, failed = 0, 0
            for _, name in ipairs(names) do
              local ok, status, err = task.spawn(function() return xpcall(T[name], debug.traceback) end):wait()
              if ok and status then passed = passed + 1 else
                failed = failed + 1
                print("FAIL " .. name .. ": " .. tostring(ok and err or status))
              end
            end
            print(("%d passed, %d failed"):format(passed, failed))
            """
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript, name: file, configure: configure))
        try await runtime.start()
        let drive = await runtime.withEngine { engine in
            engine.spawnChunk(source: Array(driver.utf8), chunkName: "=driver", label: "driver", arguments: [.text(source)])
        }
        XCTAssertNil(drive)
        await runtime.withEngine { $0.drain() }
        await runtime.waitUntilIdle()
        await runtime.close()
        XCTAssertEqual(transcript.errors.map(\.description), [])
        let failures = transcript.lines.filter { $0.hasPrefix("FAIL") }
        XCTAssertEqual(failures, [], failures.joined(separator: "\n"))
        XCTAssertTrue(transcript.lines.last?.hasSuffix(" 0 failed") == true, "\(transcript.lines)")
        XCTAssertFalse(transcript.lines.last?.hasPrefix("0 passed") == true, "no test ran in \(file)")
    }

    func testJSON() async throws { try await runLuaTestFile("test_json.lua") }
    func testPatterns() async throws { try await runLuaTestFile("test_patterns.lua") }
    func testREPL() async throws { try await runLuaTestFile("test_repl.lua") }
    func testDocs() async throws { try await runLuaTestFile("test_docs.lua") }
    /// Issue 26: where Lookout's Lua differed from stock 5.4.4 (the file passes under `lua5.4` too).
    func testStock() async throws { try await runLuaTestFile("test_stock.lua") }
    /// Issue 26: `--trusted` scripts get stock's print, debug hooks, binary chunks and require.
    func testStockTrusted() async throws { try await runLuaTestFile("test_stock_trusted.lua") { $0.trusted = true } }
}
