import Foundation
import LookoutSim
import LookoutWire
import XCTest

/// A boat simulator of its own for the tests that change metadata, shared by the process and
/// never stopped.
actor SKMetaSim {
    static let shared = SKMetaSim()
    private var running: (sim: SignalKSimulator, base: URL)?

    func get() async throws -> (sim: SignalKSimulator, base: URL) {
        if let running { return running }
        let sim = try SignalKSimulator(options: .init(seed: 5, autoTick: false))
        let r = (sim, try await sim.start())
        running = r
        return r
    }
}

/// `meta` on the full model's leaves and the `displayUnits` signalk-server serves beside it
/// (issue 27): `fullsignalk.ts` `addValue`/`mergeLeafMeta`, `rest.js` `enhanceTreeMetadata`,
/// `ws.ts` `handleValuesMeta`, the default unit preferences (preset `nautical-metric`).
extension SignalKFidelityTests {
    /// The displayUnits signalk-server 2.31.1 resolves for the boat's paths by default.
    static let knots: JSONValue = [
        "category": "speed", "targetUnit": "kn", "formula": "value * 1.94384", "inverseFormula": "value * 0.514444",
        "symbol": "kn", "displayFormat": "0.0",
    ]
    static let degrees: JSONValue = [
        "category": "angle", "targetUnit": "degree", "formula": "value * 57.29577951308231",
        "inverseFormula": "value / 57.29577951308231", "symbol": "°", "displayFormat": "0.0",
    ]
    static let celsius: JSONValue = [
        "category": "temperature", "targetUnit": "C", "formula": "value - 273.15", "inverseFormula": "value + 273.15",
        "symbol": "°C", "displayFormat": "0.0",
    ]

    func testTheFullModelsLeavesCarryMetaWithDisplayUnits() async throws {
        let r = try await SKSharedSims.shared.boat()
        let (status, vessel, text) = try await http(.GET, r.base, "/signalk/v1/api/vessels/self")
        XCTAssertEqual(status, 200, text)
        let v = try XCTUnwrap(vessel)
        let sog = v["navigation"]?["speedOverGround"]?["meta"]
        XCTAssertEqual(sog?["units"], "m/s", text)
        XCTAssertNotNil(sog?["description"]?.stringValue)
        XCTAssertEqual(sog?["displayUnits"], Self.knots)
        XCTAssertEqual(v["navigation"]?["headingTrue"]?["meta"]?["displayUnits"], Self.degrees)
        XCTAssertEqual(v["environment"]?["wind"]?["angleApparent"]?["meta"]?["displayUnits"], Self.degrees)
        XCTAssertEqual(v["environment"]?["wind"]?["speedTrue"]?["meta"]?["displayUnits"], Self.knots)
        XCTAssertEqual(v["environment"]?["water"]?["temperature"]?["meta"]?["displayUnits"], Self.celsius)
        XCTAssertEqual(v["environment"]?["depth"]?["belowTransducer"]?["meta"]?["displayUnits"], [
            "category": "depth", "targetUnit": "m", "formula": "value", "inverseFormula": "value", "symbol": "m",
            "displayFormat": "0.0",
        ])
        XCTAssertEqual(v["electrical"]?["batteries"]?["house"]?["voltage"]?["meta"]?["displayUnits"]?["symbol"], "V")
        XCTAssertEqual(v["electrical"]?["batteries"]?["house"]?["voltage"]?["meta"]?["units"], "V")
        // A leaf whose meta has no units (position: per property) gets no displayUnits; groups have no meta.
        XCTAssertNotNil(v["navigation"]?["position"]?["meta"]?["properties"])
        XCTAssertNil(v["navigation"]?["position"]?["meta"]?["displayUnits"])
        XCTAssertNil(v["navigation"]?["meta"])
        XCTAssertNil(v["meta"])

        // One leaf, and the whole model: there the path still starts with vessels.<id>, so only the
        // units decide (metres are "distance", in nautical miles), as on signalk-server.
        let (_, leaf, _) = try await http(.GET, r.base, "/signalk/v1/api/vessels/self/navigation/speedOverGround")
        XCTAssertEqual(leaf?["meta"]?["displayUnits"], Self.knots)
        let (_, root, _) = try await http(.GET, r.base, "/signalk/v1/api/")
        let mine = root?["vessels"]?[r.sim.selfID]
        XCTAssertEqual(mine?["navigation"]?["speedOverGround"]?["meta"]?["displayUnits"], Self.knots)
        XCTAssertEqual(mine?["environment"]?["depth"]?["belowTransducer"]?["meta"]?["displayUnits"]?["targetUnit"], "naut-mile")
        // The simulator's own model (what it keeps) has the meta without the resolved displayUnits.
        let kept = await r.sim.fullModel()
        XCTAssertEqual(kept["vessels"]?[r.sim.selfID]?["navigation"]?["speedOverGround"]?["meta"]?["units"], "m/s")
        XCTAssertNil(kept["vessels"]?[r.sim.selfID]?["navigation"]?["speedOverGround"]?["meta"]?["displayUnits"])
    }

    func testMetaRoutesAndTheVesselsMetaMapCarryDisplayUnits() async throws {
        let r = try await SKSharedSims.shared.boat()
        let api = "/signalk/v1/api/vessels/"
        let (s1, meta, _) = try await http(.GET, r.base, api + "self/navigation/speedOverGround/meta")
        XCTAssertEqual(s1, 200)
        XCTAssertEqual(meta?["displayUnits"], Self.knots)
        // A single key is the stored metadata: no displayUnits was stored.
        let (s2, _, _) = try await http(.GET, r.base, api + "self/navigation/speedOverGround/meta/displayUnits")
        XCTAssertEqual(s2, 404)
        let (s3, all, text) = try await http(.GET, r.base, api + "self/meta")
        XCTAssertEqual(s3, 200, text)
        XCTAssertEqual(all?["navigation.speedOverGround"]?["displayUnits"], Self.knots)
        XCTAssertEqual(all?["environment.water.temperature"]?["units"], "K")
        XCTAssertEqual(all?["environment.depth.belowTransducer"]?["displayUnits"]?["category"], "depth")
        XCTAssertNil(all?["navigation"], "groups have no meta in the model")
        let (s4, _, _) = try await http(.GET, r.base, api + "urn:mrn:imo:mmsi:111111111/meta")
        XCTAssertEqual(s4, 404)
    }

    func testSendMetaDeltasCarryDisplayUnits() async throws {
        let r = try await SKSharedSims.shared.boat()
        let ws = try await socket(r.base, "subscribe=none&sendMeta=all")
        ws.send(["context": "vessels.self", "subscribe": [["path": "navigation.courseOverGroundTrue", "policy": "instant"]]])
        let cog = await framesBefore(ws, valueOf: "navigation.courseOverGroundTrue").compactMap { $0["updates"]?[0]?["meta"]?[0] }
        XCTAssertEqual(cog.map { $0["path"] }, ["navigation.courseOverGroundTrue"])
        XCTAssertEqual(cog.first?["value"]?["displayUnits"], Self.degrees)
        // A group's meta (no units) comes without displayUnits.
        ws.send(["context": "vessels.self", "subscribe": [["path": "environment.water.temperature", "policy": "instant"]]])
        let water = await framesBefore(ws, valueOf: "environment.water.temperature").compactMap { $0["updates"]?[0]?["meta"]?[0] }
        XCTAssertEqual(water.map { $0["path"] }, ["environment.water.temperature", "environment.water"])
        XCTAssertEqual(water.first?["value"]?["displayUnits"], Self.celsius)
        XCTAssertNotNil(water.last?["value"]?["description"])
        XCTAssertNil(water.last?["value"]?["displayUnits"])
        await ws.close()
    }

    /// A displayUnits PUT (category and target unit, as the admin UI stores it) changes what is
    /// served: the meta route, the leaf in the model and the meta deltas of new sockets; a `meta`
    /// delta a writing client sends merges onto the leaf too.
    func testAStoredDisplayUnitsChoosesTheTargetUnitEverywhere() async throws {
        let r = try await SKMetaSim.shared.get()
        let api = "/signalk/v1/api/vessels/self/environment/wind/speedTrue"
        let (status, _, text) = try await http(.PUT, r.base, api + "/meta/displayUnits",
                                               body: #"{"value":{"category":"speed","targetUnit":"km/h"}}"#)
        XCTAssertEqual(status, 202, text)
        let kmh: JSONValue = [
            "category": "speed", "targetUnit": "km/h", "formula": "value * 3.6", "inverseFormula": "value * 0.277778",
            "symbol": "km/h", "displayFormat": "0.0",
        ]
        let (_, meta, _) = try await http(.GET, r.base, api + "/meta")
        XCTAssertEqual(meta?["displayUnits"], kmh)
        XCTAssertEqual(meta?["units"], "m/s")
        let (_, leaf, _) = try await http(.GET, r.base, api)
        XCTAssertEqual(leaf?["meta"]?["displayUnits"], kmh)
        XCTAssertNotNil(leaf?["value"]?.doubleValue)
        let ws = try await socket(r.base, "subscribe=none&sendMeta=all")
        ws.send(["context": "vessels.self", "subscribe": [["path": "environment.wind.speedTrue", "policy": "instant"]]])
        let metas = await framesBefore(ws, valueOf: "environment.wind.speedTrue").compactMap { $0["updates"]?[0]?["meta"]?[0] }
        XCTAssertEqual(metas.first?["value"]?["displayUnits"], kmh)

        ws.send(["context": "vessels.self", "updates": [["meta": [["path": "environment.wind.speedTrue", "value": ["displayName": "TWS"]]]]]])
        var merged: JSONValue?
        for _ in 0..<500 {
            let (_, l, _) = try await http(.GET, r.base, api)
            if l?["meta"]?["displayName"] == "TWS" { merged = l; break }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(merged?["meta"]?["displayUnits"], kmh, "the delta's fields merge; what was there stays")
        XCTAssertEqual(merged?["meta"]?["units"], "m/s")
        await ws.close()
    }
}
