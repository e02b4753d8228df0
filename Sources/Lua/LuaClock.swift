import Foundation

/// Wall-clock time as scripts and host modules see it. ``system`` is the computer's clock; a test
/// runner can give a virtual one, so that an 8-hour night runs in seconds. Host modules read
/// "now" through `engine.clock.now()`, never `Date()`, for anything a script can observe.
public struct LuaClock: Sendable {
    private let read: @Sendable () -> Date
    /// The virtual time behind the clock, or `nil` for a clock that moves by itself.
    public let virtual: LuaVirtualTime?
    /// Whether this is the computer's clock (else `os.time()` and `os.date()` follow it too).
    public let isSystem: Bool

    /// A clock that reads `now` (e.g. the demo's story time, faster than real time).
    public init(now: @escaping @Sendable () -> Date) {
        read = now
        virtual = nil
        isSystem = false
    }

    /// The current time.
    public func now() -> Date { read() }

    /// The computer's clock.
    public static let system = LuaClock(system: ())

    private init(system: Void) {
        read = { Date() }
        virtual = nil
        isSystem = true
    }

    /// A virtual clock: time stands still while Lua code runs or host work (`call.wait`) is under
    /// way, and jumps to the next timer deadline when nothing else can happen. Timers, `sleep`
    /// and `engine.clock.now()` all follow it, exactly and deterministically. CPU-time slices and
    /// the run's wall-clock limit stay on real time.
    public static func virtual(_ time: LuaVirtualTime) -> LuaClock { LuaClock(time) }

    private init(_ time: LuaVirtualTime) {
        read = { time.now() }
        virtual = time
        isSystem = false
    }
}

/// The state of a virtual clock: a start date and the nanoseconds elapsed since, moved forward
/// only by the executor of the Lua state that runs on it.
public final class LuaVirtualTime: @unchecked Sendable {
    // @unchecked Sendable: `elapsedNanoseconds` and `onAdvance` are only touched with `lock` held.
    private let lock = NSLock()
    private var elapsedNanoseconds: Int64 = 0
    private var onAdvance: (@Sendable (Date) -> Void)?

    /// The date virtual time starts at.
    public let start: Date

    /// A virtual time starting at `start`.
    public init(start: Date) { self.start = start }

    /// Nanoseconds since `start`.
    public var elapsed: Int64 { lock.withLock { elapsedNanoseconds } }

    /// The current virtual date.
    public func now() -> Date { start.addingTimeInterval(Double(elapsed) / 1e9) }

    /// Sets a function called on the Lua thread each time the clock jumps, before the timers
    /// due at the new time fire (a test runner feeds simulators there). It may block briefly.
    public func setAdvanceHandler(_ handler: @escaping @Sendable (Date) -> Void) {
        lock.withLock { onAdvance = handler }
    }

    /// Moves the clock forward to `nanoseconds` after start (never backward) and calls the
    /// advance handler.
    func advance(to nanoseconds: Int64) {
        let handler: (@Sendable (Date) -> Void)? = lock.withLock {
            guard nanoseconds > elapsedNanoseconds else { return nil }
            elapsedNanoseconds = nanoseconds
            return onAdvance
        }
        handler?(now())
    }
}
