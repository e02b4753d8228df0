import Foundation
import LookoutSim
import LookoutWire

/// Writes the demo's readings into the Nightscout simulator as a CGM uploader would: one `sgv`
/// entry per step with its trend arrow, a carb treatment when the story eats, and a backfill of
/// the last readings at start so the chart is never empty. Readings are dated in story time
/// (`DemoClock`): five minutes apart.
actor DemoFeed {
    let simulator: NightscoutSimulator
    let trace: DemoTrace
    let clock: DemoClock
    private(set) var index = 0
    /// The reading taken at the start of the story.
    private var first = 0
    private var task: Task<Void, Never>?

    init(simulator: NightscoutSimulator, trace: DemoTrace, clock: DemoClock) {
        self.simulator = simulator
        self.trace = trace
        self.clock = clock
    }

    /// Backfills `history` readings (ending now; one whole cycle by default, so the live story
    /// starts at its beginning) and starts the live feed.
    func start(history: Int = 60) async {
        index = history
        first = history
        var docs: [JSONValue] = []
        for i in 0..<history { docs.append(entry(i)) }
        await simulator.seed("entries", docs)
        let step = trace.step
        task = Task { [weak self] in
            while !Task.isCancelled {
                await self?.tick()
                try? await Task.sleep(for: .milliseconds(Int(step * 1000)))
            }
        }
    }

    func stop() { task?.cancel() }

    /// Readings written since the start (the backfill not counted).
    var live: Int { index - first }

    /// Writes the next reading (and the carbs when the story eats).
    func tick() async {
        let now = clock.date(reading: index, first: first)
        await simulator.seed("entries", [entry(index)])
        if trace.isTreatment(index) {
            await simulator.seed("treatments", [[
                "eventType": "Carb Correction", "carbs": 15, "date": .int(Self.ms(now)), "enteredBy": "lookout-demo",
                "notes": "15 g glucose tablets",
            ]])
        }
        index += 1
    }

    /// Reading `i`, dated in story time (five minutes after the one before).
    private func entry(_ i: Int) -> JSONValue {
        let date = clock.date(reading: i, first: first)
        let r = trace.reading(i)
        return [
            "type": "sgv", "sgv": .int(Int64(r.sgv)), "direction": .string(r.direction), "date": .int(Self.ms(date)),
            "dateString": .string(ISO8601DateFormatter().string(from: date)), "device": "lookout-demo",
        ]
    }

    static func ms(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded()) }
}
