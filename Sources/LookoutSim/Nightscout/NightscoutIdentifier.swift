import Crypto
import Foundation
import LookoutWire

/// v3 identifier calculation (§3.9): UUID v5 in the namespace `NightscoutRocks!`.
enum NSIdentifier {
    static let namespace = Array("NightscoutRocks!".utf8)

    /// RFC 4122 UUID v5 of `name` in the Nightscout namespace, lowercase.
    static func uuidV5(_ name: String) -> String {
        var h = Array(Insecure.SHA1.hash(data: Data(namespace + Array(name.utf8))).prefix(16))
        h[6] = (h[6] & 0x0F) | 0x50
        h[8] = (h[8] & 0x3F) | 0x80
        let hex = NSHash.hex(h)
        let c = Array(hex)
        return [c[0..<8], c[8..<12], c[12..<16], c[16..<20], c[20..<32]].map { String($0) }.joined(separator: "-")
    }

    /// JS decimal form of a number.
    static func jsNumber(_ v: JSONValue?) -> String {
        switch v {
        case .int(let i)?: return String(i)
        case .double(let d)?: return jsString(d)
        case .string(let s)?: return s
        case nil: return "undefined"
        default: return v!.jsonString
        }
    }

    /// `Number.prototype.toString` of `d`: the shortest digits that read back as `d`, in plain
    /// decimal from 1e-6 up to below 1e21 and as `1e+21`/`1.5e-7` outside (no `Int64` in between,
    /// so `1e19` is `10000000000000000000`, not a trap).
    static func jsString(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == 0 { return "0" }
        // Swift's description holds the shortest round-trip digits; take digits and exponent.
        let text = "\(abs(d))"
        var mantissa = text, exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = String(text[..<e])
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        var digits: [Character] = mantissa.filter { $0.isNumber }
        let point = mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) } ?? mantissa.count
        var n = point + exponent  // the decimal point sits after n digits
        while digits.first == "0" { digits.removeFirst(); n -= 1 }
        while digits.last == "0" { digits.removeLast() }
        let k = digits.count
        let sign = d < 0 ? "-" : ""
        let all = String(digits)
        if k <= n && n <= 21 { return sign + all + String(repeating: "0", count: n - k) }
        if 0 < n && n <= 21 { return sign + String(digits[0..<n]) + "." + String(digits[n...]) }
        if -6 < n && n <= 0 { return sign + "0." + String(repeating: "0", count: -n) + all }
        let e = n - 1
        let exp = e >= 0 ? "e+\(e)" : "e-\(-e)"
        let body = k == 1 ? all : String(digits[0]) + "." + String(digits[1...])
        return sign + body + exp
    }

    /// `<device>_<date>[_<eventType>]` → UUID v5.
    static func calculate(_ doc: [String: JSONValue]) -> String {
        let device: String
        switch doc["device"] {
        case .string(let s)?: device = s
        case nil: device = "undefined"
        case let v?: device = v == .null ? "null" : jsNumber(v)
        }
        var name = device + "_" + jsNumber(doc["date"])
        if let et = doc["eventType"], isTruthy(et) { name += "_" + (et.stringValue ?? jsNumber(et)) }
        return uuidV5(name)
    }

    static func isTruthy(_ v: JSONValue) -> Bool {
        switch v {
        case .null: return false
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d != 0 && !d.isNaN
        case .string(let s): return !s.isEmpty
        default: return true
        }
    }
}
