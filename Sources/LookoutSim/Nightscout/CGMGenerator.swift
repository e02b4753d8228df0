import Foundation
import LookoutWire

/// Deterministic synthetic Nightscout data: 5-minute CGM readings with trend arrows computed from
/// the slope and sensor noise, meal carbs with boluses, and Loop devicestatus, plus named scenarios.
/// Times of day are UTC (the simulator's "local" offset is 0).
public struct CGMGenerator: Sendable {
    /// Situations laid over the last day of generated data.
    public enum Scenario: String, Sendable, CaseIterable {
        /// Glucose drifts down to about 55 mg/dL between 02:00 and 04:00 and recovers.
        case overnightLow
        /// A sensor compression artefact: a sudden ~50 mg/dL drop at 03:00 for 25 minutes, then back.
        case compressionLow
        /// A 45-minute gap with no readings (plus a few single dropped readings).
        case missedReadings
        /// A large late meal without a pre-bolus: glucose rises 3–4 mg/dL per minute.
        case rapidPostMealRise
    }

    /// Generated documents (v1 shapes, without `_id`).
    public struct Output: Sendable {
        /// `sgv` entries, oldest first.
        public var entries: [JSONValue]
        /// Meal boluses / carb entries, oldest first.
        public var treatments: [JSONValue]
        /// Loop devicestatus documents, oldest first.
        public var deviceStatus: [JSONValue]
    }

    /// Seed for all randomness.
    public var seed: UInt64
    /// The newest reading's time (rounded down to 5 minutes).
    public var end: Date
    /// `device` of the entries.
    public var device: String

    /// Creates a generator.
    public init(seed: UInt64 = 1, end: Date, device: String = "share2") {
        self.seed = seed
        self.end = end
        self.device = device
    }

    /// Direction name and trend number for a slope in mg/dL per minute (`nil` → not computable):
    /// the house's one rule, `GlucoseTrend` (what `nightscout.direction()` says).
    public static func direction(slopePerMinute s: Double?) -> (String, Int) {
        let name = GlucoseTrend.name(slopeMgdlPerMinute: s ?? .nan)
        return (name, GlucoseTrend.number(name) ?? 8)
    }

    struct Meal { var at: Int64; var carbs: Double; var bolus: Double; var bolusAt: Int64 }

    /// Generates `days` of data ending at `end`.
    public func generate(days: Double, scenarios: Set<Scenario> = []) -> Output {
        var rng = SeededRandom(seed: seed)
        let step: Int64 = 300_000
        let endMs = NSDates.ms(end) / step * step
        let count = Int((days * 86_400_000) / Double(step))
        let startMs = endMs - Int64(max(count - 1, 0)) * step
        let dayMs: Int64 = 86_400_000
        let lastDayStart = endMs - dayMs

        // Meals: three a day with jitter.
        var meals: [Meal] = []
        var day = startMs / dayMs * dayMs
        while day <= endMs {
            for (hour, base) in [(7.5, 45.0), (12.5, 60.0), (18.5, 70.0)] {
                let at = day + Int64((hour + (rng.unit() - 0.5)) * 3_600_000) / 60_000 * 60_000
                let carbs = (base + (rng.unit() - 0.5) * 30).rounded()
                meals.append(Meal(at: at, carbs: carbs, bolus: (carbs / 10 * 20).rounded() / 20, bolusAt: at))
            }
            day += dayMs
        }
        if scenarios.contains(.rapidPostMealRise) {
            let at = lastDayStart + dayMs / 24 * 21  // 21:00 of the last day window
            meals.append(Meal(at: at, carbs: 100, bolus: 4, bolusAt: at + 45 * 60_000))
        }
        meals = meals.filter { $0.at >= startMs && $0.at <= endMs }.sorted { $0.at < $1.at }

        func carbEffect(_ dtMin: Double, _ carbs: Double, fast: Bool) -> Double {
            guard dtMin > 0 else { return 0 }
            let dur = fast ? 60.0 : 150.0
            return carbs * (fast ? 4.5 : 3.6) * min(dtMin / dur, 1)
        }
        func insulinEffect(_ dtMin: Double, _ units: Double) -> Double {
            guard dtMin > 0 else { return 0 }
            let x = min(dtMin / 240, 1)
            return units * 38 * x * x * (3 - 2 * x)
        }
        func iob(_ t: Int64) -> Double {
            meals.reduce(0) { acc, m in
                let dt = Double(t - m.bolusAt) / 60_000
                guard dt >= 0, dt < 360 else { return acc }
                return acc + m.bolus * max(0, 1 - dt / 360)
            }
        }
        func cob(_ t: Int64) -> Double {
            meals.reduce(0) { acc, m in
                let dt = Double(t - m.at) / 60_000
                guard dt >= 0, dt < 180 else { return acc }
                return acc + m.carbs * (1 - dt / 180)
            }
        }

        var entries: [JSONValue] = []
        var statuses: [JSONValue] = []
        var walk = 0.0
        var prev: (Int64, Double)? = nil
        let gapStart = lastDayStart + 14 * 3_600_000
        for i in 0..<count {
            let t = startMs + Int64(i) * step
            let hour = Double((t % dayMs + dayMs) % dayMs) / 3_600_000
            walk = walk * 0.97 + rng.gaussian() * 2.0
            var bg = 115 + 15 * sin((hour - 4) / 24 * 2 * .pi) + walk
            if (4...8).contains(hour) { bg += (hour - 4) * 5 }  // dawn phenomenon
            for m in meals {
                let fast = scenarios.contains(.rapidPostMealRise) && m.carbs == 100 && m.at >= lastDayStart
                bg += carbEffect(Double(t - m.at) / 60_000, m.carbs, fast: fast)
                bg -= insulinEffect(Double(t - m.bolusAt) / 60_000, m.bolus)
            }
            // Meal effects are absorbed into a baseline (counter-regulation) after ~6 h.
            bg -= meals.reduce(0) { acc, m in
                let dt = Double(t - m.at) / 60_000
                guard dt > 240 else { return acc }
                let net = m.carbs * 3.6 - m.bolus * 38
                return acc + net * min((dt - 240) / 120, 1)
            }
            let inLast = t >= lastDayStart
            if inLast, scenarios.contains(.overnightLow) {
                let minutes = Double(t - (lastDayStart + 2 * 3_600_000)) / 60_000
                if minutes >= 0, minutes <= 150 {
                    let depth = minutes <= 90 ? minutes / 90 : max(0, 1 - (minutes - 90) / 60)
                    bg = bg * (1 - depth) + 55 * depth
                }
            }
            if inLast, scenarios.contains(.compressionLow) {
                let minutes = Double(t - (lastDayStart + 3 * 3_600_000)) / 60_000
                if minutes >= 0, minutes < 25 { bg -= 50 }
            }
            let sensor = min(400, max(40, (bg + rng.gaussian() * 3).rounded()))
            if inLast, scenarios.contains(.missedReadings) {
                if t >= gapStart, t < gapStart + 45 * 60_000 { prev = nil; continue }
                if rng.unit() < 0.02 { continue }
            }
            let slope = prev.map { (sensor - $0.1) / (Double(t - $0.0) / 60_000) }
            let usable = prev.map { t - $0.0 <= 10 * 60_000 } ?? false
            let (dir, trend) = Self.direction(slopePerMinute: usable ? slope : nil)
            var e: [String: JSONValue] = [
                "type": "sgv", "sgv": .int(Int64(sensor)), "date": .int(t), "dateString": .string(NSDates.iso(t)),
                "sysTime": .string(NSDates.iso(t)), "direction": .string(dir), "trend": .int(Int64(trend)),
                "device": .string(device), "noise": 1, "utcOffset": 0,
            ]
            if let p = prev, usable { e["delta"] = .number(sensor - p.1) }
            entries.append(.object(e))
            prev = (t, sensor)

            let iso = JSONValue.string(NSDates.iso(t))
            let iobV = (iob(t) * 100).rounded() / 100, cobV = cob(t).rounded()
            let predicted = (0..<12).map { k in JSONValue.int(Int64(min(400, max(40, sensor + (slope ?? 0) * 5 * Double(k) * 0.6)))) }
            let rate = max(0, ((0.8 + (sensor - 110) / 100) * 20).rounded() / 20)
            statuses.append([
                "device": "loop://Simulator", "created_at": iso, "utcOffset": 0,
                "loop": [
                    "name": "Loop", "version": "3.4.0", "timestamp": iso,
                    "iob": ["timestamp": iso, "iob": .number(iobV)], "cob": ["timestamp": iso, "cob": .number(cobV)],
                    "predicted": ["startDate": iso, "values": .array(predicted)],
                    "enacted": ["rate": .number(rate), "duration": 30, "timestamp": iso, "received": true],
                ],
                "pump": [
                    "clock": iso, "pumpID": "123456", "manufacturer": "Insulet", "model": "Dash",
                    "reservoir": .number((200 - Double(i) * 0.1).rounded()), "suspended": false, "bolusing": false,
                    "battery": ["percent": 80],
                ],
                "uploader": ["name": "iPhone", "timestamp": iso, "battery": .int(Int64(100 - i % 60)), "isCharging": false],
            ])
        }
        let treatments: [JSONValue] = meals.flatMap { m -> [JSONValue] in
            var out: [JSONValue] = []
            if m.bolusAt == m.at {
                out.append([
                    "eventType": "Meal Bolus", "carbs": .number(m.carbs), "insulin": .number(m.bolus),
                    "created_at": .string(NSDates.iso(m.at)), "absorptionTime": 180, "enteredBy": "lookout-sim",
                    "utcOffset": 0,
                ])
            } else {
                out.append([
                    "eventType": "Carb Correction", "carbs": .number(m.carbs), "created_at": .string(NSDates.iso(m.at)),
                    "absorptionTime": 120, "enteredBy": "lookout-sim", "utcOffset": 0,
                ])
                out.append([
                    "eventType": "Correction Bolus", "insulin": .number(m.bolus),
                    "created_at": .string(NSDates.iso(m.bolusAt)), "enteredBy": "lookout-sim", "utcOffset": 0,
                ])
            }
            return out
        }
        return Output(entries: entries, treatments: treatments, deviceStatus: statuses)
    }
}

extension NightscoutSimulator {
    /// Fills the store with `days` of generated data ending at the simulator clock's now (as v1
    /// uploads, so without `srvModified`). Returns what was inserted.
    @discardableResult
    public func fill(days: Double, seed: UInt64 = 1, scenarios: Set<CGMGenerator.Scenario> = []) async
        -> CGMGenerator.Output
    {
        let out = CGMGenerator(seed: seed, end: options.clock()).generate(days: days, scenarios: scenarios)
        await self.seed("entries", out.entries)
        await self.seed("treatments", out.treatments)
        await self.seed("devicestatus", out.deviceStatus)
        return out
    }
}
