import Foundation

/// Wall-clock time as scripts and host modules see it. ``system`` is the computer's clock; a test
/// runner can give a virtual one, so that an 8-hour night runs in seconds. Host modules read
/// "now" through `engine.clock.now()`, never `Date()`, for anything a script can observe.
public struct LuaClock: Sendable {
    private let read: @Sendable () -> Date

    /// A clock that reads `now`.
    public init(now: @escaping @Sendable () -> Date) { read = now }

    /// The current time.
    public func now() -> Date { read() }

    /// The computer's clock.
    public static let system = LuaClock { Date() }
}
