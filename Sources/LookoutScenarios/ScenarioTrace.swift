import Foundation
import Lua

/// Builds a scenario's data from its compact description: glucose keyframes with seeded sensor
/// noise, missed readings, Loop reports, boat positions drifting from an anchor.
enum ScenarioTrace {
    /// Key points `{ {"2h", 52}, {at = "3h", value = 60} }` as (seconds from start, value).
    static func points(_ v: LuaValue?, _ path: String) throws -> [(Double, Double)] {
        guard case .array(let list)? = v, !list.isEmpty else {
            throw ScenarioError("\(path): expected a list of points such as { {\"0m\", 140}, {\"3h\", 52} }")
        }
        let parsed = try list.enumerated().map { i, p -> (Double, Double) in
            let where_ = "\(path)[\(i + 1)]"
            switch p {
            case .array(let pair) where pair.count == 2:
                guard let value = pair[1].double else { throw ScenarioError("\(where_)[2]: expected a number") }
                return (try Scenario.duration(pair[0], "\(where_)[1]"), value)
            case .object(let o):
                guard let value = (o["value"] ?? o["sgv"] ?? o["distance"])?.double else {
                    throw ScenarioError("\(where_): expected {at = \"…\", value = number}")
                }
                return (try Scenario.duration(o["at"], "\(where_).at"), value)
            default:
                throw ScenarioError("\(where_): expected {\"3h\", 52} or {at = \"3h\", value = 52}")
            }
        }
        return parsed.sorted { $0.0 < $1.0 }
    }

    /// Linear interpolation between points; flat before the first and after the last.
    static func interpolate(_ points: [(Double, Double)], at t: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 0 }
        if t <= first.0 { return first.1 }
        if t >= last.0 { return last.1 }
        for (a, b) in zip(points, points.dropFirst()) where t <= b.0 {
            return b.0 == a.0 ? b.1 : a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0)
        }
        return last.1
    }

    static func readings(_ bg: LuaValue, start: Date, end: Date) throws -> [Scenario.Reading] {
        let span = end.timeIntervalSince(start)
        if case .array(let values) = bg {
            return try values.enumerated().map { i, v in
                guard let sgv = v.double, sgv >= 0 else { throw ScenarioError("bg[\(i + 1)]: expected a glucose value in mg/dL") }
                return Scenario.Reading(time: start.addingTimeInterval(Double(i) * 300), sgv: Int(sgv.rounded()))
            }
        }
        guard case .object(let o) = bg else { throw ScenarioError("bg: expected {points = …} or a list of values every 5 minutes") }
        let points = try points(o["points"], "bg.points")
        let every = try o["every"].map { try Scenario.duration($0, "bg.every") } ?? 300
        guard every >= 60 else { throw ScenarioError("bg.every: at least 1m") }
        let history = try o["history"].map { try Scenario.duration($0, "bg.history") } ?? 3600
        let noise = o["noise"]?.double ?? 2
        var random = SeededNoise(seed: UInt64(bitPattern: o["seed"]?.int ?? 1))
        var out: [Scenario.Reading] = []
        var t = -(history / every).rounded(.down) * every
        var wander = 0.0
        while t <= span {
            wander = wander * 0.8 + random.gaussian() * noise * 0.6  // sensor noise is correlated
            let value = interpolate(points, at: t) + wander
            out.append(Scenario.Reading(time: start.addingTimeInterval(t), sgv: Int(min(400, max(39, value.rounded())))))
            t += every
        }
        return out
    }

    static func dropping(_ missed: LuaValue, from readings: [Scenario.Reading], start: Date) throws -> [Scenario.Reading] {
        guard case .array(let list) = missed else { throw ScenarioError("missed: expected a list of {from = \"…\", to = \"…\"}") }
        let gaps = try list.enumerated().map { i, g -> (Double, Double) in
            guard case .object(let o) = g else { throw ScenarioError("missed[\(i + 1)]: expected {from = \"3h\", to = \"3h45m\"}") }
            return (try Scenario.duration(o["from"], "missed[\(i + 1)].from"), try Scenario.duration(o["to"], "missed[\(i + 1)].to"))
        }
        return readings.filter { r in
            let t = r.time.timeIntervalSince(start)
            return !gaps.contains { t >= $0.0 && t < $0.1 }
        }
    }

    static func loopReports(_ loop: LuaValue, start: Date, end: Date) throws -> [Date] {
        guard case .object(let o) = loop else { throw ScenarioError("loop: expected {every = \"5m\", stop = \"2h\"}") }
        let every = try o["every"].map { try Scenario.duration($0, "loop.every") } ?? 300
        guard every >= 60 else { throw ScenarioError("loop.every: at least 1m") }
        let stop = try o["stop"].map { try Scenario.duration($0, "loop.stop") } ?? end.timeIntervalSince(start)
        let history = try o["history"].map { try Scenario.duration($0, "loop.history") } ?? 3600
        return stride(from: -(history / every).rounded(.down) * every, through: stop, by: every).map { start.addingTimeInterval($0) }
    }

    static func boat(_ boat: LuaValue, start: Date, end: Date) throws -> Scenario.BoatTrace {
        guard case .object(let o) = boat, case .object(let anchor)? = o["anchor"],
              let lat = anchor["lat"]?.double, let lon = anchor["lon"]?.double, abs(lat) <= 90, abs(lon) <= 180
        else { throw ScenarioError("boat: expected {anchor = {lat = …, lon = …}, points = {…}}") }
        let radius = o["radius"]?.double ?? 40
        let every = try o["every"].map { try Scenario.duration($0, "boat.every") } ?? 60
        guard every >= 1 else { throw ScenarioError("boat.every: at least 1s") }
        let distances = try points(o["points"], "boat.points")
        let wind = try o["wind"].map { try points($0, "boat.wind") }
        let bearing = (o["bearing"]?.double ?? 45) * .pi / 180
        let swing = o["swing"]?.double ?? 5
        var samples: [Scenario.BoatSample] = []
        var t = 0.0
        let span = end.timeIntervalSince(start)
        while t <= span {
            // The boat swings on its rode (period ~10 min) around the drift distance.
            let d = max(0, interpolate(distances, at: t) + swing * sin(2 * .pi * t / 600))
            let (la, lo) = offset(latitude: lat, longitude: lon, metres: d, bearing: bearing)
            samples.append(Scenario.BoatSample(time: start.addingTimeInterval(t), latitude: la, longitude: lo,
                                               windSpeed: wind.map { interpolate($0, at: t) }, depth: o["depth"]?.double ?? 6))
            t += every
        }
        return Scenario.BoatTrace(anchorLatitude: lat, anchorLongitude: lon, radius: radius, samples: samples)
    }

    /// A point `metres` away on `bearing` (radians) on a sphere.
    static func offset(latitude: Double, longitude: Double, metres: Double, bearing: Double) -> (Double, Double) {
        let r = 6_371_000.0, delta = metres / r
        let p1 = latitude * .pi / 180, l1 = longitude * .pi / 180
        let p2 = asin(sin(p1) * cos(delta) + cos(p1) * sin(delta) * cos(bearing))
        let l2 = l1 + atan2(sin(bearing) * sin(delta) * cos(p1), cos(delta) - sin(p1) * sin(p2))
        return (p2 * 180 / .pi, l2 * 180 / .pi)
    }

    /// Great-circle distance in metres (haversine).
    static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let p1 = lat1 * .pi / 180, p2 = lat2 * .pi / 180
        let dp = p2 - p1, dl = (lon2 - lon1) * .pi / 180
        let a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * 6_371_000 * atan2(sqrt(a), sqrt(1 - a))
    }
}

/// A small seeded generator (Knuth's MMIX linear congruential step; the high bits are used):
/// the same scenario gives the same trace everywhere.
struct SeededNoise {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x2545_F491_4F6C_DD1D | 1 }
    /// Uniform in (0, 1).
    mutating func unit() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Double(state >> 11) + 0.5) / 9_007_199_254_740_992
    }
    /// Standard normal (Box–Muller).
    mutating func gaussian() -> Double { sqrt(-2 * log(unit())) * cos(2 * .pi * unit()) }
}
