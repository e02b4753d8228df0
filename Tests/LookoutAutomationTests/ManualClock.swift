import Foundation
import LookoutWire
import Lua

@testable import LookoutModules
@testable import LookoutConfig

/// A clock tests move by hand (`LuaOptions.clock`): no sleeps, exact times.
final class ManualClock: Sendable {
    private let time: Locked<Date>

    /// A clock at `start`.
    init(_ start: Date) { time = Locked(start) }

    /// The clock scripts read.
    var lua: LuaClock { LuaClock { [time] in time.withLock { $0 } } }

    /// Now.
    var now: Date { time.withLock { $0 } }

    /// Moves time forward.
    func advance(_ seconds: Double) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }

    /// Sets the time.
    func set(_ date: Date) { time.withLock { $0 = date } }
}
