import Foundation
import LookoutWire

/// Date helpers for the wire formats of the Nightscout spec (§0): epoch ms, UTC ISO-8601 with
/// milliseconds, and RFC 1123 HTTP dates (second precision).
enum NSDates {
    /// Epoch milliseconds of a `Date`.
    static func ms(_ d: Date) -> Int64 { ISO8601.epochMilliseconds(d) }

    /// `2024-01-02T03:04:05.678Z` for epoch ms.
    static func iso(_ ms: Int64) -> String { ISO8601.format(epochMilliseconds: ms) }

    /// RFC 1123, e.g. `Wed, 17 Oct 2018 05:13:00 GMT`.
    static func rfc1123(_ ms: Int64) -> String { HTTPDate.format(epochMilliseconds: ms) }

    /// Parses an RFC 1123 / RFC 2822 date (also accepts ISO) to epoch ms.
    static func parseHTTPDate(_ s: String) -> Int64? { HTTPDate.parse(s) ?? parseISO(s)?.ms }

    /// Parses ISO-8601 as Nightscout accepts it (date only, with/without time, fraction with `.`
    /// or `,`, `Z` or `±hh[[:]mm]`; surrounding blanks ignored). Returns epoch ms and the offset in
    /// minutes (nil when no zone given: treated as UTC).
    static func parseISO(_ raw: String) -> (ms: Int64, offset: Int?)? {
        ISO8601.parse(raw.trimmingCharacters(in: .whitespaces), rules: .nightscout)
            .map { ($0.epochMilliseconds, $0.offsetMinutes) }
    }

    /// The largest distance from the epoch a JavaScript `Date` holds (±100,000,000 days, in ms):
    /// beyond it `new Date(x)` and `moment(x)` are invalid.
    static let jsDateLimit: Double = 8.64e15

    /// Parses a date given as number (ms, or seconds when below 946684800000), numeric string,
    /// ISO-8601 or RFC 2822/1123 string; returns ms and the zone offset if the input carried one.
    /// A number outside a JavaScript date's range, before or after the seconds reading, is no
    /// date (nil), as `dateTools.parseToMoment` finds `moment(x)` invalid.
    static func parseAny(_ v: JSONValue) -> (ms: Int64, offset: Int?)? {
        switch v {
        case .int, .double:
            guard let d = v.doubleValue, d.isFinite, abs(d) <= jsDateLimit else { return nil }
            let ms = d < 946_684_800_000 ? d.rounded(.towardZero) * 1000 : d
            guard abs(ms) <= jsDateLimit else { return nil }
            return (Int64(ms.rounded(.down)), nil)
        case .string(let s):
            if let d = Double(s), d.isFinite { return parseAny(.double(d)) }
            if let r = parseISO(s) { return r }
            if let r = parseHTTPDate(s) { return (r, 0) }
            return nil
        default: return nil
        }
    }
}
