import Foundation
import Logging
import LookoutSim
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutAutomation

/// With `SideEffects.record`, Nightscout writes and remote commands and Signal K PUTs and
/// deltas are recorded at the script's (virtual) time and nothing reaches the servers.
final class SideEffectsRecordingTests: XCTestCase {
    func testWritesAndCommandsAreRecordedNotSent() async throws {
        let ns = try await NightscoutModuleSim.shared.start()
        let sk = try await SignalKTestSim.module.get()
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-fx-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let tokenFile = home.appendingPathComponent("token").path
        try Data(ns.adminToken.utf8).write(to: URL(fileURLWithPath: tokenFile))
        let config = try HostConfig(text: """
            [nightscout.home]
            url = "\(ns.url.absoluteString)"
            token_file = "\(tokenFile)"
            [signalk.boat]
            url = "\(sk.base.absoluteString)"
            """)
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let effects = SideEffectLog()
        let start = Date(timeIntervalSince1970: 1_768_082_400)
        let virtual = LuaVirtualTime(start: start)
        let marker = "fx-\(UUID().uuidString.prefix(8))"
        let modules = HostModules.all(config: config, paths: paths, logger: Logger(label: "fx"), sideEffects: .record(effects))
        let (transcript, outcome) = try await runLua("""
            local nightscout, signalk = require "nightscout", require "signalk"
            local home = assert(nightscout.client "home")
            sleep "10m"
            local item = assert(home:upload_treatment { eventType = "Note", notes = "\(marker)" })
            print(item.state)
            print(assert(home:bolus(1.5)).state)
            print(select(2, home:bolus("lots")).code)
            assert(home:patch("treatments", "abc", { notes = "x" }))
            local boat = assert(signalk.connect "boat")
            sleep "1h"
            print(assert(boat:put("steering.autopilot.state", "standby")).state)
            assert(boat:send_delta { path = "environment.outside.temperature", value = 280.5 })
            """, modules: modules) { options in options.clock = .virtual(virtual) }
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(transcript.lines, ["recorded", "recorded", "refused", "COMPLETED"])

        let all = effects.all
        XCTAssertEqual(all.map(\.kind), ["nightscout.upload", "nightscout.remote", "nightscout.patch", "signalk.put", "signalk.delta"])
        XCTAssertEqual(all.map { $0.time.timeIntervalSince(start) }, [600, 600, 600, 4200, 4200], "recorded at virtual time")
        XCTAssertEqual(all[0].details["collection"], "treatments")
        XCTAssertTrue(all[0].summary.contains(marker), all[0].summary)
        XCTAssertTrue(all[1].summary.contains("1.5"), all[1].summary)
        XCTAssertEqual(all[3].details["path"], "steering.autopilot.state")
        XCTAssertTrue(all[4].summary.contains("environment.outside.temperature=280.5"), all[4].summary)
        for e in all { XCTAssertFalse("\(e)".contains(ns.adminToken), "no secret in a recorded entry") }

        // Nothing reached the Nightscout simulator.
        let treatments = await ns.sim.documents("treatments")
        XCTAssertFalse(treatments.contains { $0.objectValue?["notes"]?.stringValue == marker })
    }
}
