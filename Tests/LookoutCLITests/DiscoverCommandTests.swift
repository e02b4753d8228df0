import Foundation
import XCTest

/// `lookout discover` finds `lookout sim signalk`, which announces itself by mDNS on loopback.
final class DiscoverCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testDiscoverFindsTheSimulatorOnLoopback() throws {
        let sim = try launch(["sim", "signalk", "--port", "0"])
        XCTAssertTrue(sim.waitForOutput(containing: "serving until Ctrl-C", timeout: 30), sim.output(.stderr))
        let announced = sim.output()
        guard announced.contains("announced by mDNS") else {
            throw XCTSkip("loopback multicast is not available here: \(announced)")
        }
        let stream = try XCTUnwrap(announced.split(separator: "\n").first { $0.hasPrefix("stream: ") }).dropFirst("stream: ".count)
        let result = try lookout(["discover", "--loopback", "--timeout", "2"])
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("_signalk-ws._tcp  \(stream)  self urn:mrn:imo:mmsi:230099999"), result.stdout)
        XCTAssertTrue(result.stdout.contains("_signalk-http._tcp"), result.stdout)
        sim.send(signal: SIGINT)
        assertExit(try XCTUnwrap(sim.waitForExit(timeout: 10)), 0)
    }
}
