import Foundation
import LookoutWire

/// Live CGM data after a fill: each call makes the next reading (an `sgv` entry and a Loop
/// devicestatus), continuing from the newest stored entry. Each reading stands for 5 minutes of
/// story time, whatever the real time between calls: the value drifts back from where the fill
/// ended towards the generator's daily pattern with a random walk, and its direction follows
/// `CGMGenerator.direction` for the change over those 5 minutes.
struct LiveCGM: Sendable {
    private var rng: SeededRandom
    private var previous: Double?
    private var deviation = 0.0

    init(seed: UInt64) { rng = SeededRandom(seed: seed ^ 0x5EED_11FE) }

    /// The generator's daily pattern at `t` (as `CGMGenerator`, without meals).
    static func pattern(_ t: Int64) -> Double {
        let hour = Double((t % 86_400_000 + 86_400_000) % 86_400_000) / 3_600_000
        var bg = 115 + 15 * sin((hour - 4) / 24 * 2 * .pi)
        if (4...8).contains(hour) { bg += (hour - 4) * 5 }
        return bg
    }

    /// The next reading at `t`; `last` is the newest stored sgv when this generator has made none.
    mutating func next(at t: Int64, device: String, last: Double?) -> (entry: JSONValue, status: JSONValue) {
        if previous == nil, let last { deviation = last - Self.pattern(t) }
        deviation = deviation * 0.9 + rng.gaussian() * 2.5
        let sgv = min(400, max(40, (Self.pattern(t) + deviation).rounded()))
        let iso = JSONValue.string(NSDates.iso(t))
        var e: [String: JSONValue] = [
            "type": "sgv", "sgv": .int(Int64(sgv)), "date": .int(t), "dateString": iso, "sysTime": iso,
            "device": .string(device), "noise": 1, "utcOffset": 0,
        ]
        let (dir, trend) = CGMGenerator.direction(slopePerMinute: previous.map { (sgv - $0) / 5 })
        e["direction"] = .string(dir)
        e["trend"] = .int(Int64(trend))
        if let p = previous { e["delta"] = .number(sgv - p) }
        previous = sgv
        let status: JSONValue = [
            "device": "loop://Simulator", "created_at": iso, "utcOffset": 0,
            "loop": [
                "name": "Loop", "version": "3.4.0", "timestamp": iso,
                "iob": ["timestamp": iso, "iob": 0.5], "cob": ["timestamp": iso, "cob": 0],
                "predicted": ["startDate": iso, "values": .array(Array(repeating: .int(Int64(sgv)), count: 12))],
            ],
            "uploader": ["name": "iPhone", "timestamp": iso, "battery": 80, "isCharging": false],
        ]
        return (.object(e), status)
    }
}

/// The live generator of one simulator.
actor LiveFeed {
    private var generator: LiveCGM?

    /// Makes the next reading, creating the generator (with `seed`) on first use.
    func next(at t: Int64, seed: UInt64, last: Double?) -> (entry: JSONValue, status: JSONValue) {
        var g = generator ?? LiveCGM(seed: seed)
        let out = g.next(at: t, device: "share2", last: last)
        generator = g
        return out
    }
}

extension NightscoutSimulator {
    /// Stores the next live reading at `date` (an `sgv` entry continuing from the newest stored
    /// one, and a Loop devicestatus), as an uploader would through v1, and returns the entry.
    /// `lookout sim nightscout --fill N` calls this every 5 minutes (or faster with `--speed`).
    @discardableResult
    public func addLiveReading(at date: Date, seed: UInt64 = 1) async -> JSONValue {
        let t = NSDates.ms(date)
        let last = await store.transact { data -> Double? in
            NightscoutQuery.sortDescending(data.docs("entries").filter { $0.fields["type"] == "sgv" }, col: "entries")
                .first?.fields["sgv"]?.doubleValue
        }
        let (entry, status) = await live.next(at: t, seed: seed, last: last)
        await self.seed("entries", [entry])
        await self.seed("devicestatus", [status])
        return entry
    }
}
