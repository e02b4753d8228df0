import Foundation
import SignalKKit
import XCTest

@testable import LookoutModules
@testable import LookoutAutomation

/// A boat's stream as `lookout serve`'s health shows it.
final class SignalKHealthReporterTests: XCTestCase {
    func testConnectedDisconnectedAndData() throws {
        let health = HealthRegistry()
        let reporter = SignalKHealthReporter(health: health, name: "signalk:boat", script: "bridge.lua")
        func entry() throws -> HealthRegistry.Entry { try XCTUnwrap(health.snapshot().first { $0.name == "signalk:boat" }) }

        reporter.state(.connected(SignalKHello(version: "2.0.0", roles: ["master"])))
        var e = try entry()
        XCTAssertEqual(e.state, .ok)
        XCTAssertEqual(e.connected, true)
        XCTAssertEqual(e.script, "bridge.lua")
        let connectedAt = try XCTUnwrap(e.lastSuccess)

        reporter.state(.waitingToReconnect(attempt: 2, delay: .seconds(4)))
        e = try entry()
        XCTAssertEqual(e.state, .failing)
        XCTAssertEqual(e.connected, false)
        XCTAssertTrue(e.lastError?.hasPrefix("disconnected; reconnecting (attempt 2)") == true, e.lastError ?? "")

        reporter.received()  // the first value after a second or more is recorded
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(try entry().lastSuccess), connectedAt)
        reporter.state(.closed)
        XCTAssertEqual(try entry().state, .stopped)
    }
}
