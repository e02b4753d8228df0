import Foundation
import LookoutWire

extension Entry: ScannableDocument {
    /// The entry's own fields by name, numbered after the common ones (`SeenFields`).
    enum Field: Int {
        case type = 16, sgv, mbg, direction, trend, noise, filtered, unfiltered, rssi, delta, units, dateString, sysTime,
             slope, intercept, scale

        /// The field named `n`, if it is one of an entry's own.
        @inline(__always) init?(_ n: FieldName) {
            switch n.count {
            case 3:
                if n.equals("sgv") { self = .sgv } else if n.equals("mbg") { self = .mbg } else { return nil }
            case 4:
                if n.equals("type") { self = .type } else if n.equals("rssi") { self = .rssi } else { return nil }
            case 5:
                switch n[0] {
                case UInt8(ascii: "d"): if n.equals("delta") { self = .delta } else { return nil }
                case UInt8(ascii: "t"): if n.equals("trend") { self = .trend } else { return nil }
                case UInt8(ascii: "n"): if n.equals("noise") { self = .noise } else { return nil }
                case UInt8(ascii: "u"): if n.equals("units") { self = .units } else { return nil }
                case UInt8(ascii: "s"):
                    if n.equals("slope") { self = .slope } else if n.equals("scale") { self = .scale } else { return nil }
                default: return nil
                }
            case 7: if n.equals("sysTime") { self = .sysTime } else { return nil }
            case 8: if n.equals("filtered") { self = .filtered } else { return nil }
            case 9:
                if n.equals("direction") { self = .direction } else if n.equals("intercept") { self = .intercept } else { return nil }
            case 10:
                if n.equals("unfiltered") { self = .unfiltered } else if n.equals("dateString") { self = .dateString } else { return nil }
            default: return nil
            }
        }
    }

    /// Sets `field` from `v` as `init(from:)` reads it; `false` (nothing set) when the value does
    /// not fit, so the caller keeps it in `extra`.
    mutating func set(_ field: Field, _ v: JSONValue) -> Bool {
        switch field {
        case .type: guard let s = DocumentReader.string(v) else { return false }; type = EntryType(rawValue: s)
        case .sgv: guard let d = DocumentReader.double(v) else { return false }; sgv = d
        case .mbg: guard let d = DocumentReader.double(v) else { return false }; mbg = d
        case .direction: guard let s = DocumentReader.string(v) else { return false }; direction = TrendDirection(rawValue: s)
        case .trend: guard let i = DocumentReader.int(v) else { return false }; trend = i
        case .noise: guard let i = DocumentReader.int(v) else { return false }; noise = i
        case .filtered: guard let d = DocumentReader.double(v) else { return false }; filtered = d
        case .unfiltered: guard let d = DocumentReader.double(v) else { return false }; unfiltered = d
        case .rssi: guard let i = DocumentReader.int(v) else { return false }; rssi = i
        case .delta: guard let d = DocumentReader.double(v) else { return false }; delta = d
        case .units: guard let s = DocumentReader.string(v) else { return false }; units = s
        case .dateString: guard let d = DocumentReader.date(v) else { return false }; dateString = d
        case .sysTime: guard let d = DocumentReader.date(v) else { return false }; sysTime = d
        case .slope: guard let d = DocumentReader.double(v) else { return false }; slope = d
        case .intercept: guard let d = DocumentReader.double(v) else { return false }; intercept = d
        case .scale: guard let d = DocumentReader.double(v) else { return false }; scale = d
        }
        return true
    }

    /// Decodes the entry object at `parser`'s position in one pass (see `ScannableDocument`).
    static func scan(_ parser: inout JSONParser) throws -> Entry {
        guard parser.at(UInt8(ascii: "{")) else { throw DocumentScanFallback() }
        var entry = Entry()
        var seen = SeenFields()
        try parser.scanMembers { p, name in
            let value = try p.parseValue()
            if let f = CommonFields.Field(name) {
                try seen.insert(f.rawValue)
                if entry.common.set(f, value) { return }
            } else if let f = Field(name) {
                try seen.insert(f.rawValue)
                if entry.set(f, value) { return }
            }
            try entry.extra.keepUnknown(name, value)
        }
        return entry
    }
}
