import Foundation
import LookoutSim
import LookoutWire

/// The demo's weather: at the start of each glucose cycle a squall passes (the first `squall`
/// readings, 90 minutes of story time), with true wind of about 25 knots, so that the Signal K →
/// Nightscout bridge writes its "Heavy weather" note at its own threshold (20 kn), not a lowered
/// one. The gusts are published into the Signal K simulator ten times a second, beside the boat's
/// own calm wind (about 12 kn, once a second), so the bridge's window averages land above 20 kn.
actor DemoWeather {
    let boat: SignalKSimulator
    let clock: DemoClock
    let cycle: Int
    /// Readings (from the start of a cycle) the squall lasts.
    let squall = 18
    /// The gusts' true wind, m/s (13 m/s ≈ 25 kn).
    let gust = 13.0
    private var task: Task<Void, Never>?

    init(boat: SignalKSimulator, clock: DemoClock, cycle: Int) {
        self.boat = boat
        self.clock = clock
        self.cycle = cycle
    }

    /// Whether the squall blows at story reading `index` (counted from the start of the story).
    func blowing(at index: Int) -> Bool { ((index % cycle) + cycle) % cycle < squall }

    func start() {
        task = Task { [weak self] in
            while !Task.isCancelled {
                await self?.blow()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func stop() { task?.cancel() }

    private func blow() async {
        let index = Int(Date().timeIntervalSince(clock.start) / clock.step)
        guard blowing(at: index) else { return }
        let wobble = sin(Date().timeIntervalSince1970 * 3) * 1.5
        await boat.publish([
            "updates": [[
                "source": ["label": "lookout-demo.weather"],
                "timestamp": .string(ISO8601DateFormatter().string(from: Date())),
                "values": [["path": "environment.wind.speedTrue", "value": .number(((gust + wobble) * 100).rounded() / 100)]],
            ]],
        ])
    }
}
