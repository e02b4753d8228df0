import Foundation

/// The demo's glucose story, told fast: one reading every `step` seconds of real time, each
/// standing for five minutes of a night. A cycle falls from a comfortable 130 mg/dL into an
/// urgent low, stays there long enough for the low alert to fire and escalate, is treated with
/// carbs and comes back into range; then the next cycle starts.
struct DemoTrace: Sendable {
    /// Seconds between readings (real time).
    var step: Double = 5
    /// Readings per cycle.
    let cycle = 60

    /// The reading number `index` of the demo (0, 1, 2, …): mg/dL and the trend arrow.
    func reading(_ index: Int) -> (sgv: Int, direction: String) {
        let v = value(index)
        let slope = (v - value(index - 1)) / 5  // mg/dL per minute, as if readings were 5 min apart
        let direction: String
        switch slope {
        case ..<(-3): direction = "DoubleDown"
        case ..<(-2): direction = "SingleDown"
        case ..<(-1): direction = "FortyFiveDown"
        case ..<1: direction = "Flat"
        case ..<2: direction = "FortyFiveUp"
        case ..<3: direction = "SingleUp"
        default: direction = "DoubleUp"
        }
        return (Int(v.rounded()), direction)
    }

    /// Whether reading `index` is the one at which carbs are eaten (a treatment is written).
    func isTreatment(_ index: Int) -> Bool { position(index) == 30 }

    private func position(_ index: Int) -> Int { ((index % cycle) + cycle) % cycle }

    private func value(_ index: Int) -> Double {
        let i = Double(position(index))
        let noise = sin(Double(index) * 1.7) * 1.5
        switch i {
        case ..<10: return 130 - i * 1.5 + noise                 // settled, drifting down
        case ..<22: return 115 - (i - 10) * 5.5 + noise          // falling fast
        case ..<31: return 49 + sin(i) * 2                        // urgent low, no noise above 55
        default: return min(150, 50 + (i - 31) * 4.5) + noise    // carbs, back into range
        }
    }
}
