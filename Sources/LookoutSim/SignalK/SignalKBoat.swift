import Foundation
import LookoutWire

/// A generated sailing boat: follows a closed track of waypoints off Helsinki, with SOG/COG/heading,
/// true and apparent wind, depth, water temperature, battery voltage and an anchor-alarm
/// notification that raises and clears on a fixed schedule. Deterministic from the seed: the same
/// seed and the same sequence of `step(dt:)` calls give the same values.
public struct SignalKBoat: Sendable {
    /// Waypoints (latitude, longitude in degrees) sailed in a loop.
    public static let track: [(Double, Double)] = [
        (60.1500, 24.9500), (60.1450, 24.9800), (60.1300, 24.9850), (60.1250, 24.9550), (60.1380, 24.9350),
    ]
    /// Seconds of simulated time between anchor-alarm raises, and how long each lasts.
    public static let alarmCycle: Double = 120, alarmDuration: Double = 20

    private var rng: SeededRandom
    private(set) var latitude: Double
    private(set) var longitude: Double
    private var heading: Double  // rad
    private var sog: Double = 3.0
    private var waypoint = 1
    private var elapsed: Double = 0
    private var windDir: Double  // true, rad (direction wind comes from)
    private var windSpeed: Double = 6.0
    private var battery: Double = 12.8
    private var lastAlarm: Bool?

    /// Creates a boat at the first waypoint.
    public init(seed: UInt64) {
        rng = SeededRandom(seed: seed)
        latitude = Self.track[0].0
        longitude = Self.track[0].1
        heading = Self.bearing(Self.track[0], Self.track[1])
        windDir = 200 * .pi / 180 + (rng.unit() - 0.5) * 0.5
    }

    static func bearing(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let dn = (b.0 - a.0) * 111_320
        let de = (b.1 - a.1) * 111_320 * cos(a.0 * .pi / 180)
        return norm(atan2(de, dn))
    }

    static func norm(_ a: Double) -> Double {
        var x = a.truncatingRemainder(dividingBy: 2 * .pi)
        if x < 0 { x += 2 * .pi }
        return x
    }

    static func r(_ x: Double, _ places: Double = 1e5) -> JSONValue { .number((x * places).rounded() / places) }

    /// Advances the boat by `dt` seconds and returns one delta (no context: it is the self vessel)
    /// with one update per NMEA 2000 PGN, stamped `timestamp`.
    public mutating func step(dt: Double, timestamp: String) -> JSONValue {
        elapsed += dt
        // Steer toward the next waypoint, at most 3°/s.
        let target = Self.track[waypoint]
        let want = Self.bearing((latitude, longitude), target)
        var diff = want - heading
        if diff > .pi { diff -= 2 * .pi }
        if diff < -.pi { diff += 2 * .pi }
        let maxTurn = 3 * .pi / 180 * dt
        heading = Self.norm(heading + max(-maxTurn, min(maxTurn, diff)))
        sog = max(1.5, min(4.5, sog + (rng.gaussian() * 0.05) * dt.squareRoot() + (3.0 - sog) * 0.02 * dt))
        let leeway = 0.03 + rng.gaussian() * 0.005
        let cog = Self.norm(heading + leeway)
        let dist = sog * dt
        latitude += dist * cos(cog) / 111_320
        longitude += dist * sin(cog) / (111_320 * cos(latitude * .pi / 180))
        let dn = (target.0 - latitude) * 111_320
        let de = (target.1 - longitude) * 111_320 * cos(latitude * .pi / 180)
        if (dn * dn + de * de).squareRoot() < 30 { waypoint = (waypoint + 1) % Self.track.count }

        windDir = Self.norm(windDir + rng.gaussian() * 0.01 * dt.squareRoot())
        windSpeed = max(0.5, windSpeed + rng.gaussian() * 0.1 * dt.squareRoot() + (6 - windSpeed) * 0.01 * dt)
        // Apparent wind: true wind vector (blowing toward windDir+π) minus boat velocity, in boat frame.
        let twAngle = Self.norm(windDir - heading)  // relative to the bow, from which the wind comes
        let tx = windSpeed * cos(twAngle) + sog  // component from ahead
        let ty = windSpeed * sin(twAngle)
        let aws = (tx * tx + ty * ty).squareRoot()
        var awa = atan2(ty, tx)
        if awa > .pi { awa -= 2 * .pi }
        var twa = twAngle
        if twa > .pi { twa -= 2 * .pi }
        let depth = 12 + 6 * sin(elapsed / 90) + rng.gaussian() * 0.1
        let waterTemp = 288.15 + 0.5 * sin(elapsed / 600) + rng.gaussian() * 0.02
        battery = max(11.8, battery - 0.00002 * dt) + 0
        let volts = battery + rng.gaussian() * 0.01

        func src(_ pgn: Int) -> JSONValue { ["label": "can0", "type": "NMEA2000", "src": "3", "pgn": .int(Int64(pgn))] }
        func update(_ pgn: Int, _ values: [(String, JSONValue)]) -> JSONValue {
            [
                "source": src(pgn), "timestamp": .string(timestamp),
                "values": .array(values.map { ["path": .string($0.0), "value": $0.1] }),
            ]
        }
        var updates: [JSONValue] = [
            update(129025, [("navigation.position", ["latitude": Self.r(latitude, 1e7), "longitude": Self.r(longitude, 1e7)])]),
            update(129026, [("navigation.courseOverGroundTrue", Self.r(cog)), ("navigation.speedOverGround", Self.r(sog, 1e3))]),
            update(127250, [("navigation.headingTrue", Self.r(heading))]),
            update(130306, [("environment.wind.angleApparent", Self.r(awa)), ("environment.wind.speedApparent", Self.r(aws, 1e3))]),
            update(
                130306,
                [
                    ("environment.wind.angleTrueWater", Self.r(twa)), ("environment.wind.speedTrue", Self.r(windSpeed, 1e3)),
                    ("environment.wind.directionTrue", Self.r(windDir)),
                ]),
            update(128267, [("environment.depth.belowTransducer", Self.r(depth, 1e2))]),
            update(130312, [("environment.water.temperature", Self.r(waterTemp, 1e2))]),
            update(127508, [("electrical.batteries.house.voltage", Self.r(volts, 1e3))]),
        ]
        let phase = elapsed.truncatingRemainder(dividingBy: Self.alarmCycle)
        let alarm = phase >= Self.alarmCycle - Self.alarmDuration
        if alarm != lastAlarm {
            lastAlarm = alarm
            let value: JSONValue =
                alarm
                ? ["state": "alarm", "method": ["visual", "sound"], "message": "Anchor alarm - vessel is outside the anchor radius"]
                : ["state": "normal", "method": [], "message": "Anchor alarm cleared"]
            updates.append([
                "source": ["label": "anchoralarm", "type": "plugin"], "timestamp": .string(timestamp),
                "values": [["path": "notifications.navigation.anchor", "value": value]],
            ])
        }
        return ["updates": .array(updates)]
    }
}

/// Recorded deltas played back in a loop, one per tick.
struct SignalKPlayback: Sendable {
    let deltas: [JSONValue]
    private var index = 0

    /// Reads one JSON delta per line; blank lines and lines starting with `#` are skipped. A file
    /// that is a single (pretty-printed) JSON document is also accepted: an object is one delta,
    /// an array a list of deltas.
    init(contentsOf url: URL) throws {
        let data = try Data(contentsOf: url)
        var out: [JSONValue] = []
        let text = String(decoding: data, as: UTF8.self)
        var lineError: Error?
        for line in text.split(whereSeparator: \.isNewline) {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.isEmpty || t.hasPrefix("#") { continue }
            do { out.append(try JSONValue.parse(t)) } catch { lineError = error; break }
        }
        if lineError != nil {
            let whole = try JSONValue.parse(data)
            out = whole.arrayValue ?? [whole]
        }
        deltas = out.filter { $0["updates"]?.arrayValue != nil }
        guard !deltas.isEmpty else { throw SignalKSimulator.SimulatorError.emptyPlayback(url.path) }
    }

    /// The next recorded delta (wrapping around at the end).
    mutating func next() -> JSONValue {
        defer { index = (index + 1) % deltas.count }
        return deltas[index]
    }
}
