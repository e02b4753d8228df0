import Foundation
import SignalKKit
import XCTest
import LookoutWire

final class SignalKJSONTests: XCTestCase {
    /// Signal K reads numbers as written and reports parse errors as its own decoding error
    /// (the parser itself is LookoutWire's, tested in LookoutWireTests).
    func testSignalKReadingOfJSON() throws {
        guard case .double = try SignalKJSON.parse("45500.0") else { return XCTFail("45500.0 is not a double") }
        guard case .int = try SignalKJSON.parse("45500") else { return XCTFail("45500 is not an int") }
        XCTAssertThrowsError(try SignalKJSON.parse("[1,]")) { error in
            guard let e = error as? SignalKDecodingError, case .invalidJSON(let offset, _) = e else {
                return XCTFail("unexpected error \(error)")
            }
            XCTAssertEqual(offset, 3)
            XCTAssertTrue(e.description.hasPrefix("invalid JSON at byte 3: unexpected ']'"), e.description)
        }
        XCTAssertEqual(JSONValue.double(45500).jsonString, "45500.0")
    }

    func testTimestamps() {
        let cases: [(String, Double?)] = [
            ("2010-01-07T07:18:44Z", 1262848724),
            ("2014-08-15T16:00:00.081Z", 1408118400.081),
            ("2014-08-15T18:00:00.081+02:00", 1408118400.081),
            ("2014-08-15t16:00:00z", 1408118400),
            ("2014-08-15T16:00:00.123456789Z", 1408118400.123456789),
            ("2014-08-15T16:00:00", nil), ("2014-13-15T16:00:00Z", nil), ("2014-02-30T16:00:00Z", nil),
            ("2014-08-15T16:00:00.Z", nil), ("yesterday", nil), ("", nil),
        ]
        for (text, expected) in cases {
            let d = SignalKTimestamp.parse(text)
            if let expected { XCTAssertDate(d, expected) } else { XCTAssertNil(d, text) }
        }
        XCTAssertEqual(SignalKTimestamp.format(date(1408118400.081)), "2014-08-15T16:00:00.081Z")
        XCTAssertEqual(SignalKTimestamp.format(date(0)), "1970-01-01T00:00:00.000Z")
    }

    func testUnits() {
        XCTAssertEqual(SignalKUnits.degrees(fromRadians: .pi), 180, accuracy: 1e-12)
        XCTAssertEqual(SignalKUnits.radians(fromDegrees: 90), .pi / 2, accuracy: 1e-12)
        XCTAssertEqual(SignalKUnits.knots(fromMetersPerSecond: 1852.0 / 3600.0), 1, accuracy: 1e-12)
        XCTAssertEqual(SignalKUnits.knots(fromMetersPerSecond: 3.85), 7.4838, accuracy: 1e-4)
        XCTAssertEqual(SignalKUnits.metersPerSecond(fromKnots: 10), 5.144444, accuracy: 1e-6)
        XCTAssertEqual(SignalKUnits.celsius(fromKelvin: 293.15), 20, accuracy: 1e-9)
        XCTAssertEqual(SignalKUnits.kelvin(fromCelsius: -273.15), 0, accuracy: 1e-9)
    }
}
