import Foundation
import Logging
@testable import LookoutAutomation
@testable import LookoutConfig
import LookoutTestSupport
import Lua
import XCTest

/// Every module has a stub, and every function a module registers has an entry in its stub (the
/// text `help()` shows and editors complete from).
final class StubCoverageTests: XCTestCase {
    func testEveryRegisteredFunctionHasAStub() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-stubs-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let modules = HostModules.all(config: HostConfig(), paths: paths, logger: Logger(label: "test"))
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript), modules: modules)
        try await runtime.start()
        try await runtime.prepareREPL()
        let (stubs, names) = await runtime.withEngine { ($0.stubs, $0.moduleNames) }
        XCTAssertEqual(Set(names), Set(stubs.keys), "every module has a stub")
        XCTAssertTrue(Set(names).isSuperset(of: ["json", "timer", "task", "script", "log", "config", "http", "store"]))

        var source = "local registry = require('lookout._docs').new()\n"
        for (name, stub) in stubs.sorted(by: { $0.key < $1.key }) {
            source += "registry:add(\(longString(stub)), \(longString(name + ".lua")))\n"
        }
        source += """
            local checked = 0
            for _, name in ipairs({ \(names.sorted().map { "\"\($0)\"" }.joined(separator: ", ")) }) do
              local module = require(name)
              for key, value in pairs(type(module) == "table" and module or {}) do
                if type(value) == "function" then
                  checked = checked + 1
                  if not registry:entry(name .. "." .. key) then print("missing " .. name .. "." .. key) end
                end
              end
            end
            print("checked " .. checked)
            """
        let result = await runtime.evaluate(source)
        await runtime.close()
        XCTAssertEqual(result, .output(""))
        XCTAssertEqual(transcript.lines.filter { $0.hasPrefix("missing") }, [])
        let checked = transcript.lines.last.flatMap { Int($0.dropFirst("checked ".count)) } ?? 0
        XCTAssertGreaterThan(checked, 30, "\(transcript.lines)")
    }

    private func longString(_ text: String) -> String {
        var level = 0
        while text.contains("]" + String(repeating: "=", count: level) + "]") { level += 1 }
        let equals = String(repeating: "=", count: level)
        return "[\(equals)[\n\(text)]\(equals)]"
    }
}
