import Foundation

/// The demo's story time: one reading every `step` seconds of real time stands for five minutes,
/// so story time runs 300/`step` times faster than the computer's clock, from the demo's start.
/// The scripts run on it (their alert texts say "for 15 min", not "for 3s") and the readings are
/// dated in it.
struct DemoClock: Sendable {
    /// When the demo started (real and story time agree there).
    let start: Date
    /// Real seconds per reading.
    let step: Double

    /// Story seconds per real second.
    var factor: Double { 300 / step }

    /// Story time now.
    func now() -> Date { start.addingTimeInterval(Date().timeIntervalSince(start) * factor) }

    /// The story time of reading `index` when reading `first` is taken at the start.
    func date(reading index: Int, first: Int) -> Date { start.addingTimeInterval(Double(index - first) * 300) }
}
