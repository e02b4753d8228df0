import Foundation
import XCTest

/// `lookout discover` finds `lookout sim signalk`, which announces itself by mDNS on loopback.
final class DiscoverCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testDiscoverFindsTheSimulatorOnLoopback() throws {
        let sim = try launch(["sim", "signalk", "--port", "0"])
        XCTAssertTrue(sim.waitForOutput(containing: "serving until Ctrl-C", timeout: 30), sim.output(.stderr))
        let announced = sim.output()
        let lines = announced.split(separator: "\n").map(String.init)
        // The whole line: "not announced by mDNS: …" (the advertiser failed) must fail the test.
        XCTAssertTrue(lines.contains("announced by mDNS on 127.0.0.1"), "the simulator was not announced: \(announced)")
        XCTAssertFalse(lines.contains { $0.hasPrefix("not announced by mDNS") }, announced)
        let stream = try XCTUnwrap(lines.first { $0.hasPrefix("stream: ") }).dropFirst("stream: ".count)
        let result = try lookout(["discover", "--loopback", "--timeout", "2"])
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("_signalk-ws._tcp  \(stream)  self urn:mrn:imo:mmsi:230099999"), result.stdout)
        XCTAssertTrue(result.stdout.contains("_signalk-http._tcp"), result.stdout)
        sim.send(signal: SIGINT)
        assertExit(try XCTUnwrap(sim.waitForExit(timeout: 10)), 0)
    }
}
