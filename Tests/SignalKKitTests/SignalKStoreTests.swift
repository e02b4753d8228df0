import Foundation
import SignalKKit
import XCTest

final class SignalKStoreTests: XCTestCase {
    static let selfUUID = "vessels.urn:mrn:signalk:uuid:c0d79334-4e25-4245-8892-54e8ccc8021d"
    static let other = "vessels.urn:mrn:imo:mmsi:234567890"

    func delta(_ name: String) throws -> SignalKDelta { try SignalKDelta.parse(Fixtures.data(name)) }

    /// hello (self = uuid c0d7…), then every fixture delta: self and the other vessel stay apart.
    func testFixtureDeltasSelfVersusOtherVessel() throws {
        var model = SignalKDataModel()
        guard case .hello(let hello) = try SignalKServerMessage.parse(Fixtures.data("hello.json")) else { return XCTFail() }
        model.apply(hello: hello)
        XCTAssertEqual(model.selfContext, Self.selfUUID)
        for name in Fixtures.deltaFiles { model.apply(try delta(name)) }

        // Self: two sources for courseOverGroundTrue; the latest applied is preferred.
        let cog = try XCTUnwrap(model.leaf("navigation.courseOverGroundTrue"))
        XCTAssertEqual(cog.context, Self.selfUUID)
        XCTAssertEqual(Set(cog.bySource.keys), ["GPS-1.GP", "actisense.115"])
        XCTAssertEqual(cog.value, .double(3.615624078431453))
        XCTAssertEqual(cog.sourceRef, "actisense.115")
        XCTAssertEqual(cog.current?.source?.pgn, 128267)
        XCTAssertEqual(model.value("navigation.courseOverGroundTrue", source: "GPS-1.GP"), .double(3.615624078431440))
        XCTAssertEqual(cog.bySource["GPS-1.GP"]?.source?.sentence, "RMC")
        XCTAssertDate(cog.timestamp, 1491200044.451)

        // The other vessel's COG did not overwrite self's; it is under its own absolute key.
        XCTAssertEqual(model.value(Self.other + ".navigation.courseOverGroundTrue"), .double(2.971))
        XCTAssertEqual(model.value(Self.other + ".navigation.speedOverGround"), .double(3.85))
        XCTAssertNil(model.value("navigation.speedOverGround"), "other vessel's SOG must not appear as self's")
        XCTAssertEqual(model.leaf(Self.other + ".propulsion.0.boostPressure")?.sourceRef, "N2000-01.017")
        XCTAssertDate(model.leaf(Self.other + ".propulsion.0.boostPressure")?.timestamp, 1262848724)

        // Empty path merged at the context root.
        XCTAssertEqual(model.value(Self.other + ".name"), "WRANGO")
        XCTAssertEqual(model.leaf(context: Self.other, path: "name")?.sourceRef, "N2000-01.115")

        // Meta-only update: meta stored, no value.
        let aws = try XCTUnwrap(model.leaf(Self.other + ".environment.wind.speedApparent"))
        XCTAssertNil(aws.value)
        XCTAssertEqual(aws.units, "m/s")
        XCTAssertEqual(model.meta(Self.other + ".environment.wind.speedApparent")?["displayName"], "Apparent Wind Speed")

        // The notification was raised and then cleared by null.
        XCTAssertNil(model.leaf("notifications.mob"))
        XCTAssertEqual(model.contexts, [Self.selfUUID, Self.other])
    }

    func testNotificationRaisedThenClearedByNull() throws {
        let d = try delta("delta-notifications.json")
        var model = SignalKDataModel(selfContext: Self.selfUUID)
        let raised = model.apply(SignalKDelta(context: d.context, updates: [d.updates[0]]))
        XCTAssertEqual(raised.count, 1)
        XCTAssertTrue(raised[0].isSelf)
        let mob = try XCTUnwrap(model.value("notifications.mob"))
        XCTAssertEqual(mob["state"], "emergency")
        XCTAssertEqual(mob["method"], ["visual", "sound"])
        XCTAssertEqual(model.leaf("notifications.mob")?.sourceRef, "ttyUSB0.GP")

        let cleared = model.apply(SignalKDelta(context: d.context, updates: [d.updates[1]]))
        XCTAssertEqual(cleared.map(\.value), [nil])
        XCTAssertNil(model.leaf("notifications.mob"))
        XCTAssertEqual(model.leaves(path: "notifications.*").count, 0)
    }

    func testNullOutsideNotificationsIsStoredAsNoData() throws {
        var model = SignalKDataModel(selfContext: "vessels.urn:me")
        model.apply(try SignalKDelta.parse(#"{"updates":[{"$source":"a.1","values":[{"path":"environment.depth.belowKeel","value":4.2}]}]}"#))
        model.apply(try SignalKDelta.parse(#"{"updates":[{"$source":"a.1","values":[{"path":"environment.depth.belowKeel","value":null}]}]}"#))
        XCTAssertEqual(model.value("environment.depth.belowKeel"), .null)
    }

    func testFullModelFixture() throws {
        var model = SignalKDataModel()
        try model.applyFullModel(SignalKJSON.parse(Fixtures.data("full-model-with-sources.json")))
        let selfCtx = "vessels.urn:mrn:signalk:uuid:705f5f1a-efaf-44aa-9cb8-a0fd6305567c"
        XCTAssertEqual(model.selfContext, selfCtx)  // bare self got the vessels. prefix
        let sog = try XCTUnwrap(model.leaf("navigation.speedOverGround"))
        XCTAssertEqual(sog.value, .double(4.32693662))
        XCTAssertEqual(sog.sourceRef, "ttyUSB0.GP")
        XCTAssertEqual(sog.current?.source?.sentence, "RMC")
        XCTAssertDate(sog.timestamp, 1494911750.007)
        XCTAssertEqual(model.value("navigation.position")?["longitude"], .double(-122.44880152))
        XCTAssertEqual(model.value("navigation.headingMagnetic"), .double(5.55014702))
        XCTAssertEqual(model.value("name"), "Motu")
        XCTAssertNil(model.leaf("name")?.sourceRef)
        XCTAssertEqual(model.value("vessels.self.uuid"), "urn:mrn:signalk:uuid:705f5f1a-efaf-44aa-9cb8-a0fd6305567c")
        XCTAssertEqual(model.sources?["ttyUSB0"]?["type"], "NMEA0183")
        XCTAssertEqual(model.leaves(path: "navigation.*").map(\.path),
                       ["navigation.headingMagnetic", "navigation.position", "navigation.speedOverGround"])
    }

    func testServerStyleFullModelWithMultipleValuesAndMeta() throws {
        let json = try SignalKJSON.parse(#"""
        {"version":"0.1.0","self":"vessels.urn:mrn:imo:mmsi:230099999",
         "vessels":{"urn:mrn:imo:mmsi:230099999":{"mmsi":"230099999",
           "communication":{"callsignVhf":"OJ1234"},
           "environment":{"depth":{"meta":{"units":"m"},"belowKeel":{"value":3.1,"$source":"b.2","timestamp":"2026-01-01T00:00:01Z","meta":{"units":"m"},
              "values":{"a.1":{"value":3.0,"timestamp":"2026-01-01T00:00:00Z","pgn":128267},"b.2":{"value":3.1,"timestamp":"2026-01-01T00:00:01Z"}}}}}},
           "urn:mrn:imo:mmsi:111":{"navigation":{"speedOverGround":{"value":9.9,"$source":"ais.1","timestamp":"2026-01-01T00:00:00Z"}}}},
         "aton":{"urn:mrn:imo:mmsi:992":{"name":"Buoy"}}}
        """#)
        var model = SignalKDataModel()
        try model.applyFullModel(json)
        XCTAssertEqual(model.selfContext, "vessels.urn:mrn:imo:mmsi:230099999")
        let depth = try XCTUnwrap(model.leaf("environment.depth.belowKeel"))
        XCTAssertEqual(depth.value, .double(3.1))
        XCTAssertEqual(depth.sourceRef, "b.2")
        XCTAssertEqual(depth.bySource["a.1"]?.value, .double(3.0))
        XCTAssertEqual(depth.bySource["a.1"]?.source?.pgn, 128267)
        XCTAssertEqual(depth.units, "m")
        XCTAssertEqual(model.value("communication.callsignVhf"), "OJ1234")
        XCTAssertEqual(model.value("mmsi"), "230099999")
        XCTAssertNil(model.value("navigation.speedOverGround"))
        XCTAssertEqual(model.value("vessels.urn:mrn:imo:mmsi:111.navigation.speedOverGround"), .double(9.9))
        XCTAssertEqual(model.value("aton.urn:mrn:imo:mmsi:992.name"), "Buoy")
        XCTAssertEqual(model.leaves(path: "navigation.speedOverGround", context: "vessels.*").count, 1)
        XCTAssertEqual(model.leaves(path: "*", context: nil).count, 6)

        XCTAssertThrowsError(try model.applyFullModel(SignalKJSON.parse(#"{"vessels":{"x":{"a":{"value":1,"timestamp":"no"}}}}"#))) {
            XCTAssertTrue("\($0)".contains("vessels.x.a.timestamp: invalid RFC 3339"), "\($0)")
        }
        XCTAssertThrowsError(try model.applyFullModel(.array([])))
    }

    func testSelfUnknownUntilHelloThenMoved() throws {
        var model = SignalKDataModel()
        model.apply(try SignalKDelta.parse(#"{"updates":[{"$source":"s.1","values":[{"path":"navigation.speedOverGround","value":2}]}]}"#))
        XCTAssertEqual(model.leaves.keys.sorted(), ["vessels.self.navigation.speedOverGround"])
        XCTAssertEqual(model.value("navigation.speedOverGround"), 2)
        model.setSelf("urn:mrn:imo:mmsi:230099999")
        XCTAssertEqual(model.leaves.keys.sorted(), ["vessels.urn:mrn:imo:mmsi:230099999.navigation.speedOverGround"])
        XCTAssertEqual(model.value("navigation.speedOverGround"), 2)
        XCTAssertEqual(model.value("vessels.self.navigation.speedOverGround"), 2)
        // vessels.self in a delta maps to self; an AIS target stays apart.
        model.apply(try SignalKDelta.parse(#"{"context":"vessels.self","updates":[{"values":[{"path":"navigation.speedOverGround","value":3}]}]}"#))
        model.apply(try SignalKDelta.parse(#"{"context":"vessels.urn:mrn:imo:mmsi:111","updates":[{"values":[{"path":"navigation.speedOverGround","value":9}]}]}"#))
        XCTAssertEqual(model.value("navigation.speedOverGround"), 3)
        XCTAssertEqual(model.leaves(path: "navigation.speedOverGround", context: "vessels.*").map(\.value), [9, 3])  // sorted by absolute path
        // A different self (new server) drops the old self's values.
        model.setSelf("vessels.urn:mrn:imo:mmsi:222")
        XCTAssertNil(model.value("navigation.speedOverGround"))
        XCTAssertEqual(model.value("vessels.urn:mrn:imo:mmsi:111.navigation.speedOverGround"), 9)
    }

    func testEmptyPathMergesNestedObjects() throws {
        var model = SignalKDataModel(selfContext: "vessels.urn:me")
        let changes = model.apply(try SignalKDelta.parse(#"{"updates":[{"$source":"x","values":[{"path":"","value":{"name":"X","mmsi":"230099999","communication":{"callsignVhf":"OJ1"}}}]}]}"#))
        XCTAssertEqual(changes.map(\.path), ["communication.callsignVhf", "mmsi", "name"])
        XCTAssertEqual(model.value("name"), "X")
        XCTAssertEqual(model.value("communication.callsignVhf"), "OJ1")
    }

    func testActorStoreIngestsFrames() async throws {
        let store = SignalKStore()
        _ = try await store.ingest(frame: #"{"name":"signalk-server","version":"2.31.1","self":"vessels.urn:mrn:imo:mmsi:230099999","roles":["master","main"]}"#)
        let m = try await store.ingest(frame: #"{"context":"vessels.urn:mrn:imo:mmsi:230099999","updates":[{"$source":"can0.3","timestamp":"2026-08-22T17:01:03.120Z","values":[{"path":"navigation.speedOverGround","value":3.21}]}]}"#)
        guard case .delta = m else { return XCTFail() }
        let sog = await store.value("navigation.speedOverGround")
        XCTAssertEqual(sog, 3.21)
        let selfCtx = await store.selfContext
        XCTAssertEqual(selfCtx, "vessels.urn:mrn:imo:mmsi:230099999")
        let leaves = await store.leaves(path: "navigation.*")
        XCTAssertEqual(leaves.count, 1)
    }
}
