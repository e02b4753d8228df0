import Foundation
import Lua
import NightscoutKit

/// Times in the `nightscout` module's arguments: epoch milliseconds (Nightscout's own unit) or
/// an ISO-8601 string. A number that looks like epoch seconds (`os.time()`) is refused with a
/// hint, because reading it as milliseconds would silently mean January 1970.
enum NightscoutTimeArgument {
    /// Smallest accepted epoch-ms value (1973-03-03): anything smaller is surely seconds.
    static let smallestMilliseconds: Double = 1e11

    /// Parses a time value; `what` names it in errors (`opts.from`).
    static func date(_ value: LuaValue, what: String) throws(LuaRaise) -> Date {
        switch value {
        case .int, .double:
            let ms = value.double!
            guard LuaRange.epochMilliseconds.check(ms) != nil, abs(ms) < NightscoutDate.largestMilliseconds else {
                throw LuaRaise("\(what): expected epoch milliseconds, got \(ms), which is not a date")
            }
            guard abs(ms) >= smallestMilliseconds else {
                throw LuaRaise("\(what): expected epoch milliseconds, got \(formatted(ms)), which looks like seconds "
                               + "(multiply os.time() by 1000)")
            }
            return Date(timeIntervalSince1970: ms / 1000)
        case .string:
            guard let text = value.text, let d = NightscoutDate(string: text) else {
                throw LuaRaise("\(what): expected epoch milliseconds or an ISO-8601 time such as \"2024-05-01T10:00:00Z\"")
            }
            return d.date
        default:
            throw LuaRaise("\(what): expected epoch milliseconds or an ISO-8601 string, got \(value.typeName)")
        }
    }

    /// Parses an optional time value (`nil` when absent).
    static func optionalDate(_ value: LuaValue?, what: String) throws(LuaRaise) -> Date? {
        guard let value, value != .nil else { return nil }
        return try date(value, what: what)
    }

    /// A duration (`"3h"`, `90`, `"15m"`), for `last = …`, inside `range` (``LuaRange``).
    static func duration(_ value: LuaValue, what: String, in range: LuaRange = .duration) throws(LuaRaise) -> TimeInterval {
        let seconds: Double?
        switch value {
        case .int, .double: seconds = value.double
        case .string: seconds = value.text.flatMap(Quantities.parseDuration)
        default: seconds = nil
        }
        guard let seconds, !seconds.isNaN, seconds > 0 else {
            throw LuaRaise("\(what): expected a positive duration such as \"3h\", \"15m\" or 900 (seconds)")
        }
        guard let ok = range.check(seconds) else {
            throw LuaRaise(range.problem(what, got: value.text.map { String(reflecting: $0) } ?? LuaRange.numberText(seconds)))
        }
        return ok
    }

    private static func formatted(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }

    /// Epoch milliseconds of a date.
    static func milliseconds(_ date: Date) -> Int64 { NightscoutDate(date).epochMilliseconds }
}
