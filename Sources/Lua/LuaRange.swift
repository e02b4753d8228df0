/// What a binding accepts for a number that crosses from Lua into Swift: a duration, a timeout, a
/// count or a size, with its limits.
///
/// This is the one place where numbers from scripts are checked. Every duration, timeout, count
/// and size a binding reads goes through `LuaCall.duration`/`number`/`integer` (positional
/// arguments) or their `LuaValue` forms (option fields), which call ``check(_:)``; a value that
/// is NaN, infinite or outside the range raises
/// `bad argument #n to 'fn' (opts.timeout must be between 0s and 1d, got 1e+300)`.
/// So no script can reach a Swift conversion such as `Int64(seconds * 1e9)` that would trap.
public struct LuaRange: Sendable, CustomStringConvertible {
    /// How the limits read in messages.
    public enum Unit: Sendable {
        /// Seconds, shown as durations (`0s`, `366d`).
        case seconds
        /// Plain numbers (counts, sizes in bytes, epoch milliseconds).
        case plain
    }

    /// The smallest value accepted.
    public let lower: Double
    /// The largest value accepted.
    public let upper: Double
    /// How the limits read in messages.
    public let unit: Unit

    /// A range from `lower` to `upper` (both included).
    public init(_ lower: Double, _ upper: Double, unit: Unit = .plain) {
        self.lower = lower
        self.upper = upper
        self.unit = unit
    }

    /// The longest duration a script may ask for: a year and a day. Longer waits are surely a
    /// mistake (`sleep(1e10)`), and every deadline stays far from `Int64` nanosecond overflow.
    public static let maximumSeconds: Double = 366 * 86_400

    /// Any duration: `sleep`, `timer.after`, `task.wait`, `alert` windows, schedules (0s…366d).
    public static let duration = LuaRange(0, maximumSeconds, unit: .seconds)
    /// How long to wait for a server: connect and request timeouts (0s…1d).
    public static let timeout = LuaRange(0, 86_400, unit: .seconds)
    /// A body or download size: 1 byte…1 GiB.
    public static let bodySize = LuaRange(1, 1_073_741_824)
    /// A value drawn on a chart (±1e9: glucose, speeds, temperatures…).
    public static let chartValue = LuaRange(-1e9, 1e9)
    /// Any finite number (unit conversions, values sent as data).
    public static let finite = LuaRange(-.greatestFiniteMagnitude, .greatestFiniteMagnitude)
    /// Epoch milliseconds of a date between years -9999 and 9999 (what `Date` and JSON can show).
    public static let epochMilliseconds = LuaRange(-377_705_116_800_000, 253_402_300_799_999)

    /// A count or size from `lower` to `upper`.
    public static func count(_ lower: Int64, _ upper: Int64) -> LuaRange {
        LuaRange(Double(lower), Double(upper))
    }

    /// The value, when it is finite and inside the range (`-0` reads as `0`); else nil.
    public func check(_ value: Double) -> Double? {
        guard value.isFinite, value >= lower, value <= upper else { return nil }
        return value == 0 ? 0 : value
    }

    /// The integer, when it is inside the range; else nil.
    public func check(_ value: Int64) -> Int64? {
        let d = Double(value)
        guard d >= lower, d <= upper else { return nil }
        // Double(value) may round up to a bound: compare exactly where it matters.
        if upper < 9.2e18, value > Int64(upper) { return nil }
        if lower > -9.2e18, value < Int64(lower) { return nil }
        return value
    }

    /// `between 0s and 366d`.
    public var description: String {
        if lower == -.greatestFiniteMagnitude && upper == .greatestFiniteMagnitude { return "a finite number" }
        return "between \(show(lower)) and \(show(upper))"
    }

    /// The message fragment for a refused value: `opts.timeout must be between 0s and 1d, got 1e+300`.
    public func problem(_ what: String, got: String) -> String {
        "\(what) must be \(description), got \(got)"
    }

    private func show(_ value: Double) -> String {
        switch unit {
        case .seconds: return Quantities.formatDuration(value)
        case .plain: return LuaRange.numberText(value)
        }
    }

    /// A number as Lua's `%.14g` would show it (integers without a fraction).
    public static func numberText(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value > 0 ? "inf" : "-inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

extension Quantities {
    /// Nanoseconds in `seconds`, saturating: negative and NaN give 0, huge values give a
    /// nanosecond count that never overflows when added to a clock reading.
    public static func nanoseconds(_ seconds: Double) -> Int64 {
        guard seconds > 0 else { return 0 }  // also NaN
        let limit = Double(Int64.max / 4)
        let ns = seconds * 1e9
        return ns >= limit ? Int64.max / 4 : Int64(ns)
    }

    /// `now + nanoseconds`, saturating at `Int64.max`.
    public static func deadline(_ now: Int64, after nanoseconds: Int64) -> Int64 {
        let (sum, overflow) = now.addingReportingOverflow(nanoseconds)
        return overflow ? (nanoseconds > 0 ? .max : .min) : sum
    }

    /// `seconds` as a Swift `Duration`, saturating like ``nanoseconds(_:)``.
    public static func swiftDuration(_ seconds: Double) -> Duration {
        .nanoseconds(nanoseconds(seconds))
    }
}
