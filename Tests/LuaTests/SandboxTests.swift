import Foundation
import Lua
import LookoutTestSupport
import XCTest

final class SandboxTests: XCTestCase {
    func testDangerousFunctionsAreGone() async throws {
        let (t, outcome) = try await runLua("""
            print(io, os.execute, os.remove, os.rename, os.getenv, os.tmpname, dofile, loadfile)
            print(package.loadlib, package.cpath, string.dump, debug.getinfo, debug.sethook)
            print(type(os.time), type(os.clock), type(os.date), type(debug.traceback))
            print(pcall(collectgarbage, "stop"))
            print(collectgarbage("count") > 0)
            print(getmetatable("").__index == string)
            """)
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(t.lines[0], "nil\tnil\tnil\tnil\tnil\tnil\tnil\tnil")
        XCTAssertEqual(t.lines[1], "nil\t\tnil\tnil\tnil")
        XCTAssertEqual(t.lines[2], "function\tfunction\tfunction\tfunction")
        XCTAssertTrue(t.lines[3].hasPrefix("false\t"), t.lines[3])
        XCTAssertEqual(t.lines[4], "true")
        XCTAssertEqual(t.lines[5], "true", "the string metatable is the script's own (README: How Lookout's Lua differs)")
        XCTAssertEqual(outcome.exitCode, 0)
    }

    func testLoadIsTextOnlyAndKeepsEnvironment() async throws {
        let (t, _) = try await runLua("""
            secret_global = "visible"
            local f = load("return secret_global")
            print(f())
            print(load("return x", "chunk", "t", { x = 7 })())
            print(load("\\27Lua", "bin", "b"))
            print(load("\\27LuaT\\0", "bin"))
            """)
        XCTAssertEqual(t.lines[0], "visible")
        XCTAssertEqual(t.lines[1], "7")
        XCTAssertTrue(t.lines[2].contains("Lookout loads text chunks only"), t.lines[2])
        XCTAssertTrue(t.lines[3].hasPrefix("nil\tattempt to load a binary chunk"), t.lines[3])
    }

    func testRequireIsConfinedToTheScriptFolder() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-sandbox-\(UUID())")
        let scripts = root.appendingPathComponent("scripts")
        try FileManager.default.createDirectory(at: scripts.appendingPathComponent("lib"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try "return { name = 'helper' }".write(to: scripts.appendingPathComponent("helper.lua"), atomically: true, encoding: .utf8)
        try "return { name = 'nested' }".write(to: scripts.appendingPathComponent("lib/init.lua"), atomically: true, encoding: .utf8)
        try "return 'outside'".write(to: root.appendingPathComponent("outside.lua"), atomically: true, encoding: .utf8)
        let (t, _) = try await runLua("""
            print(require("helper").name, require("lib").name, require("lookout.json") == require("json"))
            print(pcall(require, "..outside"))
            print(pcall(require, "nosuch"))
            """) { $0.scriptDirectory = scripts.path }
        XCTAssertEqual(t.lines[0], "helper\tnested\ttrue")
        XCTAssertTrue(t.lines[1].hasPrefix("false\t"), t.lines[1])
        XCTAssertTrue(t.lines[1].contains("cannot contain"), t.lines[1])
        XCTAssertTrue(t.lines[2].contains("module 'nosuch' not found"), t.lines[2])
    }

    /// A hostile script cannot read files outside its folder through symlinks, cut a module name
    /// short with `\0` (to load a file without the `.lua` suffix), or probe paths with
    /// `package.searchpath`.
    func testRequireRefusesSymlinksOutNulNamesAndSearchpath() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-sandbox-\(UUID())")
        let scripts = root.appendingPathComponent("scripts")
        try FileManager.default.createDirectory(at: scripts.appendingPathComponent("lib"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try "return 'outside'".write(to: root.appendingPathComponent("outside.lua"), atomically: true, encoding: .utf8)
        try "return 'inside'".write(to: scripts.appendingPathComponent("inside.lua"), atomically: true, encoding: .utf8)
        try "return 'no suffix'".write(to: scripts.appendingPathComponent("notes"), atomically: true, encoding: .utf8)
        let fm = FileManager.default
        try fm.createSymbolicLink(atPath: scripts.appendingPathComponent("escape.lua").path, withDestinationPath: root.appendingPathComponent("outside.lua").path)
        try fm.createSymbolicLink(atPath: scripts.appendingPathComponent("up.lua").path, withDestinationPath: "../outside.lua")
        try fm.createSymbolicLink(atPath: scripts.appendingPathComponent("lib/init.lua").path, withDestinationPath: "../../outside.lua")
        try fm.createSymbolicLink(atPath: scripts.appendingPathComponent("alias.lua").path, withDestinationPath: "inside.lua")
        let (t, _) = try await runLua("""
            for _, name in ipairs { "escape", "up", "lib" } do
              local ok, err = pcall(require, name)
              print(ok, (tostring(err):gsub("\\n", " ")))
            end
            for _, name in ipairs { "inside\\0", "notes\\0.lua", "inside\\0anything" } do
              local ok, err = pcall(require, name)
              print(ok, (tostring(err):gsub("\\n", " ")))
            end
            print(require "alias", package.searchpath)
            """) { $0.scriptDirectory = scripts.path }
        XCTAssertEqual(t.errors.map(\.description), [])
        XCTAssertEqual(t.lines.count, 7, "\(t.lines)")
        for line in t.lines.prefix(3) {
            XCTAssertTrue(line.hasPrefix("false\t"), line)
            XCTAssertTrue(line.contains("leads outside the script folder"), line)
            XCTAssertFalse(line.contains("'outside'"), line)
        }
        // Lua's require cuts a name at "\0" before any searcher sees it: the prelude refuses such names.
        for line in t.lines.dropFirst(3).prefix(3) {
            XCTAssertTrue(line.hasPrefix("false\t"), line)
            XCTAssertTrue(line.contains("module names cannot contain '\\0'"), line)
        }
        XCTAssertEqual(t.lines.last, "inside\tnil", "a symlink within the folder is fine; package.searchpath is gone")
    }

    func testTrustedRestoresIoAndOs() async throws {
        let (t, _) = try await runLua("print(type(io), type(os.getenv), type(os.execute))") { $0.trusted = true }
        XCTAssertEqual(t.lines, ["table\tfunction\tfunction"])
    }

    func testScriptExitRunsCloseAndSetsStatus() async throws {
        let (t, outcome) = try await runLua("""
            local script = require "script"
            task.spawn(function()
              local guard <close> = setmetatable({}, { __close = function() print("closed") end })
              sleep(60)
            end)
            timer.every(1, function() end)
            sleep(0.01)
            script.exit(3)
            print("not reached")
            """)
        XCTAssertEqual(t.lines, ["closed"])
        XCTAssertEqual(outcome.exitCode, 3)
        XCTAssertEqual(t.errors.count, 0)
    }
}
