import Foundation
import LookoutStore

/// The demo's story time: one reading every `step` seconds of real time stands for five minutes,
/// so story time runs 300/`step` times faster than the computer's clock, from the demo's start.
/// The scripts run on it (their alert texts say "for 15 min", not "for 3s"), the readings are
/// dated in it, and it is written into the demo's state folder (`StoryClock`) so that
/// `lookout ack` from another terminal stamps acknowledgements in it too.
struct DemoClock: Sendable {
    /// The story clock (start and factor).
    let story: StoryClock

    /// The demo's clock from `start`, one reading every `step` real seconds.
    init(start: Date, step: Double) { story = StoryClock(start: start, factor: 300 / step) }

    /// When the demo started (real and story time agree there).
    var start: Date { story.start }

    /// Real seconds per reading.
    var step: Double { 300 / story.factor }

    /// Story time now.
    func now() -> Date { story.now() }

    /// The story time of reading `index` when reading `first` is taken at the start.
    func date(reading index: Int, first: Int) -> Date { start.addingTimeInterval(Double(index - first) * 300) }
}
