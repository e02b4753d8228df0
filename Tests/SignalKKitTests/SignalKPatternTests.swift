import SignalKKit
import XCTest

final class SignalKPatternTests: XCTestCase {
    func testWildcardTable() {
        let table: [(pattern: String, text: String, match: Bool)] = [
            ("navigation.*", "navigation.speedOverGround", true),
            ("navigation.*", "navigation.position.latitude", true),
            ("navigation.*", "navigation", false),
            ("navigation.*", "environment.depth.belowKeel", false),
            ("*.speedOverGround", "navigation.speedOverGround", true),
            ("*.speedOverGround", "navigation.speedOverGroundX", false),
            ("propulsion.*.oilTemperature", "propulsion.port.oilTemperature", true),
            ("propulsion.*.oilTemperature", "propulsion.oilTemperature", false),
            ("vessels.*", "vessels.urn:mrn:imo:mmsi:230099999", true),
            ("vessels.*", "aton.urn:mrn:imo:mmsi:992", false),
            ("vessels.*", "vessels", false),
            ("*", "", true),
            ("*", "anything.at.all", true),
            ("navigation.speedOverGround", "navigation.speedOverGround", true),
            ("navigation.speedOverGround", "navigationXspeedOverGround", false),
            ("a*a", "a", false),
            ("a*b*c", "abc", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "acb", false),
            ("**", "x", true),
        ]
        for row in table {
            XCTAssertEqual(SignalKPattern(row.pattern).matches(row.text), row.match, "\(row.pattern) ~ \(row.text)")
        }
    }

    func testContextMatchingWithSelfAlias() {
        let selfCtx = "vessels.urn:mrn:imo:mmsi:230099999"
        XCTAssertTrue(SignalKPattern.contextMatches(SignalKPattern("vessels.self"), context: selfCtx, selfContext: selfCtx))
        XCTAssertTrue(SignalKPattern.contextMatches(SignalKPattern("self"), context: selfCtx, selfContext: selfCtx))
        XCTAssertFalse(SignalKPattern.contextMatches(SignalKPattern("vessels.self"), context: "vessels.urn:other", selfContext: selfCtx))
        XCTAssertTrue(SignalKPattern.contextMatches(nil, context: "aton.x", selfContext: selfCtx))
        XCTAssertTrue(SignalKPattern.contextMatches(SignalKPattern("vessels.*"), context: "vessels.urn:other", selfContext: selfCtx))
    }

    func testContextSplitAtFirstDot() {
        XCTAssertEqual(SignalKContext.split("vessels.https://example.com/boat")?.group, "vessels")
        XCTAssertEqual(SignalKContext.split("vessels.https://example.com/boat")?.id, "https://example.com/boat")
        XCTAssertNil(SignalKContext.split("vessels"))
        XCTAssertEqual(SignalKContext.selfContext(from: "urn:mrn:x"), "vessels.urn:mrn:x")
        XCTAssertEqual(SignalKContext.selfContext(from: "vessels.urn:mrn:x"), "vessels.urn:mrn:x")
    }
}
