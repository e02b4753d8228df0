import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules

/// `config.settings(defaults)`: `[scripts."NAME".settings]` over the script's defaults.
final class ConfigSettingsTests: XCTestCase {
    private func run(_ toml: String, script: String, _ source: String) async throws -> [String] {
        let config = try HostConfig(text: toml)
        let (transcript, _) = try await runLua(source, name: script, modules: [ConfigModule(config: config)])
        return transcript.lines + transcript.errors.map(\.message)
    }

    func testOverlayAndDefaults() async throws {
        let toml = """
            [scripts."low-alert.lua".settings]
            low = 65
            site = "mum"
            """
        let source = """
            local s = require("config").settings { low = 70, urgent_low = 55, site = "home", quiet = false }
            print(s.low, s.urgent_low, s.site, s.quiet)
            """
        let configured = try await run(toml, script: "low-alert.lua", source)
        XCTAssertEqual(configured, ["65\t55\tmum\tfalse"])
        let other = try await run(toml, script: "other.lua", source)
        XCTAssertEqual(other, ["70\t55\thome\tfalse"])
    }

    func testUnknownSettingAndWrongKindRaiseNamingTheKey() async throws {
        let unknown = try await run("""
            [scripts."a.lua".settings]
            lwo = 65
            """, script: "a.lua", #"print(pcall(require("config").settings, { low = 70 }))"#)
        XCTAssertEqual(unknown.count, 1)
        XCTAssertTrue(unknown[0].hasPrefix("false\t"), unknown[0])
        XCTAssertTrue(unknown[0].contains(#"scripts."a.lua".settings.lwo: unknown setting (did you mean low? this script knows: low)"#), unknown[0])
        let wrong = try await run("""
            [scripts."a.lua".settings]
            low = "65"
            """, script: "a.lua", #"print(pcall(require("config").settings, { low = 70 }))"#)
        XCTAssertTrue(wrong[0].contains("settings.low: expected a number, got a string"), wrong[0])
    }
}
