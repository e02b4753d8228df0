import Foundation
import LookoutWire

/// Date helpers for the wire formats of the Nightscout spec (§0): epoch ms, UTC ISO-8601 with
/// milliseconds, and RFC 1123 HTTP dates (second precision).
enum NSDates {
    /// Epoch milliseconds of a `Date`.
    static func ms(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// `2024-01-02T03:04:05.678Z` for epoch ms.
    static func iso(_ ms: Int64) -> String {
        var secs = ms / 1000
        var milli = ms % 1000
        if milli < 0 { milli += 1000; secs -= 1 }
        let (y, mo, d, h, mi, s) = civil(secs)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, d, h, mi, s, Int(milli))
    }

    /// RFC 1123, e.g. `Wed, 17 Oct 2018 05:13:00 GMT`.
    static func rfc1123(_ ms: Int64) -> String {
        let secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let (y, mo, d, h, mi, s) = civil(secs)
        let days = Int((secs >= 0 ? secs : secs - 86399) / 86400)
        let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let mon = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][mo - 1]
        return String(format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", wd, d, mon, y, h, mi, s)
    }

    /// Parses an RFC 1123 date (also accepts ISO) to epoch ms.
    static func parseHTTPDate(_ s: String) -> Int64? {
        let parts = s.split(separator: " ")
        if parts.count == 6, parts[5] == "GMT" {
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            guard let d = Int(parts[1]), let mo = months.firstIndex(of: String(parts[2])), let y = Int(parts[3])
            else { return nil }
            let t = parts[4].split(separator: ":").compactMap { Int($0) }
            guard t.count == 3 else { return nil }
            return (daysFromCivil(y, mo + 1, d) * 86400 + Int64(t[0] * 3600 + t[1] * 60 + t[2])) * 1000
        }
        return parseISO(s)?.ms
    }

    /// Parses ISO-8601 (date only, with/without time, fraction with `.` or `,`, `Z` or `±hh[:]mm`).
    /// Returns epoch ms and the offset in minutes (nil when no zone given: treated as UTC).
    static func parseISO(_ raw: String) -> (ms: Int64, offset: Int?)? {
        let s = Array(raw.trimmingCharacters(in: .whitespaces).utf8)
        var i = 0
        func num(_ n: Int) -> Int? {
            guard i + n <= s.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = s[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += n
            return v
        }
        func eat(_ c: Character) -> Bool {
            if i < s.count, s[i] == c.asciiValue! { i += 1; return true }
            return false
        }
        guard let y = num(4), eat("-"), let mo = num(2), eat("-"), let d = num(2),
            (1...12).contains(mo), (1...31).contains(d)
        else { return nil }
        var h = 0, mi = 0, sec = 0, frac = 0
        var offset: Int? = nil
        if i < s.count, s[i] == UInt8(ascii: "T") || s[i] == UInt8(ascii: " ") {
            i += 1
            guard let hh = num(2), eat(":"), let mm = num(2) else { return nil }
            h = hh; mi = mm
            if eat(":") {
                guard let ss = num(2) else { return nil }
                sec = ss
                if eat(".") || eat(",") {
                    var digits = 0
                    while i < s.count, s[i] >= 0x30, s[i] <= 0x39 {
                        if digits < 3 { frac = frac * 10 + Int(s[i] - 0x30) }
                        digits += 1
                        i += 1
                    }
                    guard digits > 0 else { return nil }
                    for _ in digits..<max(3, digits) { frac *= 10 }
                }
            }
            if eat("Z") || eat("z") {
                offset = 0
            } else if i < s.count, s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-") {
                let sign = s[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = num(2) else { return nil }
                _ = eat(":")
                let om = num(2) ?? 0
                offset = sign * (oh * 60 + om)
            }
        }
        guard i == s.count, h < 24, mi < 60, sec < 61 else { return nil }
        let local = daysFromCivil(y, mo, d) * 86400 + Int64(h * 3600 + mi * 60 + sec)
        let utc = local - Int64((offset ?? 0) * 60)
        return (utc * 1000 + Int64(frac), offset)
    }

    /// Parses a date given as number (ms, or seconds when below 946684800000), numeric string,
    /// ISO-8601 or RFC 2822/1123 string; returns ms and the zone offset if the input carried one.
    static func parseAny(_ v: JSONValue) -> (ms: Int64, offset: Int?)? {
        switch v {
        case .int, .double:
            guard let d = v.doubleValue, d.isFinite else { return nil }
            let ms = d < 946_684_800_000 ? d * 1000 : d
            return (Int64(ms.rounded(.down)), nil)
        case .string(let s):
            if let d = Double(s), d.isFinite { return parseAny(.double(d)) }
            if let r = parseISO(s) { return r }
            if let r = parseHTTPDate(s) { return (r, 0) }
            return nil
        default: return nil
        }
    }

    // Howard Hinnant's civil-from-days algorithms.
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Int64(era * 146097 + doe - 719468)
    }

    static func civil(_ secs: Int64) -> (Int, Int, Int, Int, Int, Int) {
        var days = secs / 86400
        var rem = secs % 86400
        if rem < 0 { rem += 86400; days -= 1 }
        let z = Int(days) + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (y, m, d, Int(rem / 3600), Int(rem % 3600 / 60), Int(rem % 60))
    }
}
