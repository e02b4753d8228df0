import Foundation
import LookoutWire

/// The demo's glucose story, told fast: one reading every `step` seconds of real time, each
/// standing for five minutes of a night. A cycle falls from a comfortable 130 mg/dL into an
/// urgent low, stays there long enough for the low alert to fire and escalate, is treated with
/// carbs and comes back into range; then the next cycle starts.
/// (In LookoutSim so that tests can check it against `nightscout.direction()`.)
public struct DemoTrace: Sendable {
    /// Seconds between readings (real time).
    public var step: Double = 5
    /// Readings per cycle.
    public let cycle = 60

    /// A trace with one reading every `step` seconds of real time.
    public init(step: Double = 5) { self.step = step }

    /// The reading number `index` of the demo (0, 1, 2, …): mg/dL and the trend arrow, by the
    /// house's one rule (`GlucoseTrend`, what `nightscout.direction()` says) over the slope from
    /// the previous reading, five minutes earlier.
    public func reading(_ index: Int) -> (sgv: Int, direction: String) {
        let v = value(index).rounded(), previous = value(index - 1).rounded()
        return (Int(v), GlucoseTrend.name(slopeMgdlPerMinute: (v - previous) / 5))
    }

    /// Whether reading `index` is the one at which carbs are eaten (a treatment is written).
    public func isTreatment(_ index: Int) -> Bool { position(index) == 30 }

    private func position(_ index: Int) -> Int { ((index % cycle) + cycle) % cycle }

    private func value(_ index: Int) -> Double {
        let i = Double(position(index))
        let noise = sin(Double(index) * 1.7) * 1.5
        switch i {
        case ..<10: return 130 - i * 1.5 + noise                 // settled, drifting down
        case ..<22: return 115 - (i - 10) * 5.5 + noise          // falling fast
        case ..<31: return 49 + sin(i) * 2                        // urgent low, no noise above 55
        default: return min(130, 50 + (i - 31) * 4.5) + noise    // carbs, back where the next cycle starts
        }
    }
}
