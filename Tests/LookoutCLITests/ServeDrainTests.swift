import Foundation
import LookoutSim
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stopping `lookout serve`: a script whose only work left is a Signal K handler waiting for its
/// next message has nothing to drain, and stops at once instead of waiting out the drain deadline.
final class ServeDrainTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    private actor Boat {
        private var url: URL?
        /// A Signal K simulator sending deltas by itself, started once per test process.
        func start() async throws -> URL {
            if let url { return url }
            let started = try await SignalKSimulator(options: .init(rate: 10, seed: 5)).start()
            url = started
            return started
        }
    }
    private static let boat = Boat()

    func testAScriptWaitingOnlyForStreamMessagesStopsAtOnce() async throws {
        let sk = try await Self.boat.start()
        try "[signalk.boat]\nurl = \"\(sk.absoluteString)\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("Scripts/boat.lua", """
            local signalk = require "signalk"
            local boat = assert(signalk.connect "boat")
            local seen = false
            boat:on("navigation.speedOverGround", function(d)
              if not seen then seen = true print("got a delta") end
            end)
            """)
        let serve = try launch(["serve", "--status-port", "0"])
        XCTAssertTrue(serve.waitForOutput(containing: "[boat.lua] got a delta"))
        serve.send(signal: SIGTERM)
        let result = try XCTUnwrap(serve.waitForExit(timeout: 60))
        assertExit(result, 0)
        // The drain ended because nothing was in progress, not because its deadline passed.
        XCTAssertTrue(result.stderr.contains("boat.lua: stopped at once (its tasks were only waiting for events)"), result.stderr)
        XCTAssertFalse(result.stderr.contains("drain; interrupting"), result.stderr)
        XCTAssertTrue(result.stderr.contains("lookout serve: stopped"), result.stderr)
    }
}
