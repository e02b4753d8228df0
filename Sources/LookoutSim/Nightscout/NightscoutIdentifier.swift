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
        case .double(let d)?: return d.rounded() == d && abs(d) < 1e21 ? String(Int64(d)) : "\(d)"
        case .string(let s)?: return s
        case nil: return "undefined"
        default: return v!.jsonString
        }
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
