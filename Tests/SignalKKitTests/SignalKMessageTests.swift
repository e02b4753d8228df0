import Foundation
import SignalKKit
import XCTest

final class SignalKMessageTests: XCTestCase {
    /// Every fixture parses; the fast single-pass decoder agrees with the generic tree decoder.
    func testEveryFixtureParses() throws {
        let files = try Fixtures.allJSONFiles()
        XCTAssertGreaterThanOrEqual(files.count, 6)
        for name in files {
            let data = try Fixtures.data(name)
            let fast = try SignalKServerMessage.parse(data)
            let generic = try SignalKServerMessage.classify(SignalKJSON.parse(data))
            XCTAssertEqual(fast, generic, name)
            switch (name, fast) {
            case (_, .delta(let d)) where name.hasPrefix("delta-"):
                XCTAssertFalse(d.updates.isEmpty, name)
            case ("hello.json", .hello): break
            case ("full-model-with-sources.json", .unknown(let json)):
                var model = SignalKDataModel()
                let changes = try model.applyFullModel(json)
                XCTAssertFalse(changes.isEmpty)
            default: XCTFail("\(name) classified as \(fast)")
            }
        }
    }

    func testMultiUpdateFixture() throws {
        let d = try SignalKDelta.parse(Fixtures.data("delta-multi-update-with-root-path.json"))
        XCTAssertEqual(d.context, "vessels.urn:mrn:imo:mmsi:234567890")
        XCTAssertEqual(d.updates.count, 3)
        let u0 = d.updates[0]
        XCTAssertEqual(u0.source?.label, "N2000-01")
        XCTAssertEqual(u0.source?.type, "NMEA2000")
        XCTAssertEqual(u0.source?.src, "017")
        XCTAssertEqual(u0.source?.pgn, 127488)
        XCTAssertNil(u0.dollarSource)
        XCTAssertEqual(u0.sourceRef, "N2000-01.017")
        XCTAssertDate(u0.timestamp, 1262848724)  // no fractional seconds
        XCTAssertEqual(u0.values.map(\.path), ["propulsion.0.revolutions", "propulsion.0.boostPressure"])
        XCTAssertEqual(u0.values[1].value, .double(45500.0))
        XCTAssertDate(d.updates[1].timestamp, 1408118400.081)
        XCTAssertEqual(d.updates[2].values, [SignalKPathValue(path: "", value: ["name": "WRANGO"])])
    }

    func testMetaOnlyUpdateHasNoValues() throws {
        let d = try SignalKDelta.parse(Fixtures.data("delta-meta.json"))
        XCTAssertEqual(d.updates.count, 1)
        XCTAssertTrue(d.updates[0].values.isEmpty)
        XCTAssertEqual(d.updates[0].meta.first?.path, "environment.wind.speedApparent")
        XCTAssertEqual(d.updates[0].meta.first?.value["units"], "m/s")
        XCTAssertEqual(d.updates[0].meta.first?.value["zones"]?[0]?["upper"], .double(15.4333))
        XCTAssertNil(d.updates[0].source)
    }

    func testHelloFixtureAndServerHello() throws {
        guard case .hello(let h) = try SignalKServerMessage.parse(Fixtures.data("hello.json")) else { return XCTFail() }
        XCTAssertEqual(h.name, "foobar marine server")
        XCTAssertEqual(h.version, "1.0.4")
        XCTAssertEqual(h.selfContext, "vessels.urn:mrn:signalk:uuid:c0d79334-4e25-4245-8892-54e8ccc8021d")
        XCTAssertEqual(h.roles, ["master", "main"])
        XCTAssertDate(h.timestamp, 1529593756.704)

        let server = #"{"name":"signalk-server","version":"2.31.1","self":"vessels.urn:mrn:imo:mmsi:230099999","roles":["master","main"],"timestamp":"2026-08-22T17:01:02.345Z","serverStartId":"5c1e0c52-2f0e-4b7a-9a43-0b7d1e3f2a10","extra":1}"#
        guard case .hello(let s) = try SignalKServerMessage.parse(server) else { return XCTFail() }
        XCTAssertEqual(s.serverStartId, "5c1e0c52-2f0e-4b7a-9a43-0b7d1e3f2a10")
        XCTAssertEqual(s.selfContext, "vessels.urn:mrn:imo:mmsi:230099999")
        // No timestamp, bare self.
        guard case .hello(let p) = try SignalKServerMessage.parse(#"{"version":"1.7.0","self":"urn:mrn:x","roles":["main"]}"#) else { return XCTFail() }
        XCTAssertEqual(p.selfContext, "vessels.urn:mrn:x")
        XCTAssertNil(p.timestamp)
    }

    func testEveryServerFrameShapeIsClassified() throws {
        let table: [(String, (SignalKServerMessage) -> Bool)] = [
            (#""Only 'instant' and 'fixed' policies supported, ignoring policy ideal""#,
             { if case .warning(let s) = $0 { return s.hasPrefix("Only 'instant'") }; return false }),
            (#"{"state":"PENDING","requestId":"r1","statusCode":202,"href":"/signalk/v1/requests/r1"}"#,
             { if case .reply(let r) = $0 { return r.requestId == "r1" && r.statusCode == 202 && !r.isFinished && r.href == "/signalk/v1/requests/r1" }; return false }),
            (#"{"state":"COMPLETED","requestId":"r1","statusCode":200}"#,
             { if case .reply(let r) = $0 { return r.isSuccess }; return false }),
            (#"{"state":"COMPLETED","requestId":"r2","statusCode":405,"message":"PUT not supported for x"}"#,
             { if case .reply(let r) = $0 { return r.isFinished && !r.isSuccess && r.message == "PUT not supported for x" }; return false }),
            (#"{"requestId":"r3","state":"COMPLETED","result":401}"#,
             { if case .reply(let r) = $0 { return r.statusCode == 401 }; return false }),
            (#"{"requestId":"r4","statusCode":404}"#,
             { if case .reply(let r) = $0 { return r.state == nil && r.statusCode == 404 }; return false }),
            (#"{"requestId":"r5","context":"vessels.self","put":[{"path":"a.b","value":1}]}"#,
             { if case .forwardedPut(let f) = $0 { return f.requestId == "r5" && f.put[0]?["path"] == "a.b" }; return false }),
            (#"{"errorMessage":"Server outgoing buffer overflow, terminating connection"}"#,
             { if case .error(let e) = $0 { return e.hasPrefix("Server outgoing") }; return false }),
            (#"{"type":"VESSEL_INFO","data":{"name":"X"}}"#,
             { if case .event(let n, let d) = $0 { return n == "VESSEL_INFO" && d["name"] == "X" }; return false }),
            (#"{"event":"nmea0183","data":"$GPRMC"}"#,
             { if case .event(let n, _) = $0 { return n == "nmea0183" }; return false }),
            (#"{"something":"else"}"#, { if case .unknown = $0 { return true }; return false }),
            ("[1,2]", { if case .unknown = $0 { return true }; return false }),
            ("42", { if case .unknown = $0 { return true }; return false }),
            (#"{"context":"vessels.x","updates":[],"$backpressure":{"accumulated":5,"duration":100}}"#,
             { if case .delta(let d) = $0 { return d.updates.isEmpty }; return false }),
        ]
        for (frame, check) in table {
            let m = try SignalKServerMessage.parse(frame)
            XCTAssertTrue(check(m), "\(frame) → \(m)")
            XCTAssertEqual(m, try SignalKServerMessage.classify(SignalKJSON.parse(frame)), frame)
        }
    }

    func testDeltaVariants() throws {
        // Both source and $source; $source wins as the reference.
        let both = try SignalKDelta.parse(#"{"context":"vessels.urn:a","updates":[{"source":{"label":"can0","type":"NMEA2000","pgn":129026,"src":"3"},"$source":"can0.3","timestamp":"2026-08-22T17:01:03.120Z","values":[{"path":"navigation.speedOverGround","value":3.21}]}]}"#)
        XCTAssertEqual(both.updates[0].sourceRef, "can0.3")
        XCTAssertEqual(both.updates[0].source?.src, "3")
        // Only $source; numeric src and extra members; no context (self); no timestamp.
        let onlyRef = try SignalKDelta.parse(#"{"updates":[{"$source":"x.1","values":[{"path":"a","value":[1,"b",null]}]},{"source":{"label":"n2k","src":115,"canName":"c0ffee","deviceInstance":2},"values":[]}]}"#)
        XCTAssertNil(onlyRef.context)
        XCTAssertEqual(onlyRef.resolvedContext(selfContext: "vessels.urn:me"), "vessels.urn:me")
        XCTAssertEqual(onlyRef.updates[0].values[0].value, [1, "b", nil])
        XCTAssertEqual(onlyRef.updates[1].source?.src, "115")
        XCTAssertEqual(onlyRef.updates[1].sourceRef, "n2k.c0ffee")
        XCTAssertEqual(onlyRef.updates[1].source?.extra["deviceInstance"], 2)
        // Neither source nor $source.
        let none = try SignalKDelta.parse(#"{"context":"vessels.self","updates":[{"values":[{"path":"a","value":1}]}]}"#)
        XCTAssertNil(none.updates[0].sourceRef)
        XCTAssertEqual(none.resolvedContext(selfContext: nil), "vessels.self")
        // Update-level path fallback; entries without any path are dropped; staleness extension tolerated.
        let fallback = try SignalKDelta.parse(#"{"updates":[{"path":"p.q","values":[{"value":1},{"path":"r","value":null,"state":{"timedOut":true}}]},{"values":[{"value":2}]}]}"#)
        XCTAssertEqual(fallback.updates[0].values, [SignalKPathValue(path: "p.q", value: 1), SignalKPathValue(path: "r", value: nil)])
        XCTAssertTrue(fallback.updates[1].values.isEmpty)
        // NMEA 0183 derived refs.
        XCTAssertEqual(SignalKSource(label: "GPS-1", type: "NMEA0183", talker: "GP").derivedRef, "GPS-1.GP")
        XCTAssertEqual(SignalKSource(label: "ttyUSB0", type: "NMEA0183").derivedRef, "ttyUSB0.XX")
        XCTAssertEqual(SignalKSource(label: "my-plugin").derivedRef, "my-plugin")
    }

    func testMalformedInputNamesTheProblem() {
        let table: [(String, String)] = [
            (#"{"updates":{}}"#, "updates: expected array, found object"),
            (#"{"updates":[1]}"#, "updates[0]: expected object, found number"),
            (#"{"context":5,"updates":[]}"#, "context: expected string, found number"),
            (#"{"updates":[{"values":{}}]}"#, "updates[0].values: expected array, found object"),
            (#"{"updates":[{"values":["x"]}]}"#, "updates[0].values[0]: expected object, found string"),
            (#"{"updates":[{"values":[{"path":7,"value":1}]}]}"#, "updates[0].values[0].path: expected string, found number"),
            (#"{"updates":[{},{"values":[{"path":"a"}]}]}"#, "updates[1].values[0].value: required field is missing"),
            (#"{"updates":[{"meta":[{"path":"a"}]}]}"#, "updates[0].meta[0].value: required field is missing"),
            (#"{"updates":[{"timestamp":"yesterday","values":[]}]}"#, "updates[0].timestamp: invalid RFC 3339 timestamp \"yesterday\""),
            (#"{"updates":[{"timestamp":5}]}"#, "updates[0].timestamp: expected string, found number"),
            (#"{"updates":[{"source":"can0"}]}"#, "updates[0].source: expected object, found string"),
            (#"{"updates":[{"source":{"label":[]}}]}"#, "updates[0].source.label: expected string, found array"),
            (#"{"updates":[{"source":{"pgn":"x"}, "$source":1}]}"#, "$source: expected string, found number"),
            (#"{"version":"1","roles":"main"}"#, "roles: expected array, found string"),
            (#"{"version":"1","roles":["main",2]}"#, "roles[1]: expected string, found number"),
            (#"{"requestId":5,"state":"COMPLETED"}"#, "requestId: expected string, found number"),
            (#"{"requestId":"a","statusCode":"x"}"#, "statusCode: expected integer, found string"),
            (#"{"updates":[{"values":[{"path":"a","value":1}]}"#, "invalid JSON at byte"),
            ("not json", "invalid JSON at byte 0"),
        ]
        for (frame, fragment) in table {
            for (label, parse) in [("fast", { try SignalKServerMessage.parse(frame) }),
                                   ("generic", { try SignalKServerMessage.classify(SignalKJSON.parse(frame)) })] {
                XCTAssertThrowsError(try parse(), "\(label) \(frame)") { error in
                    guard let e = error as? SignalKDecodingError else { return XCTFail("\(error)") }
                    XCTAssertTrue(e.description.contains(fragment), "\(label) \(frame): \(e.description)")
                }
            }
        }
        XCTAssertThrowsError(try SignalKDelta.parse(#"{"roles":["main"],"version":"1"}"#)) { error in
            XCTAssertTrue("\(error)".contains("not a delta"), "\(error)")
        }
    }

    /// Many deltas parsed and stored in a row keep the model consistent (the speed of this is
    /// measured in `lookout-bench P9`, not asserted here).
    func testManyDeltasParsedAndStoredKeepTheLatestValue() throws {
        var model = SignalKDataModel(selfContext: "vessels.urn:mrn:imo:mmsi:230099999")
        for i in 0..<2_000 {
            let frame = Array(#"{"context":"vessels.urn:mrn:imo:mmsi:230099999","updates":[{"source":{"label":"can0","type":"NMEA2000","pgn":129026,"src":"3"},"$source":"can0.3","timestamp":"2026-08-22T17:01:03.120Z","values":[{"path":"navigation.speedOverGround","value":\#(i).5}]}]}"#.utf8)
            guard case .delta(let d) = try SignalKServerMessage.parse(frame) else { return XCTFail("frame \(i) is not a delta") }
            model.apply(d)
        }
        XCTAssertEqual(model.value("navigation.speedOverGround"), 1999.5)
    }
}
