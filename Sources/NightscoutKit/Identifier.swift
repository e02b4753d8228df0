import Crypto
import Foundation

/// The API v3 identifier calculation (spec §3.9).
public enum NightscoutIdentifier {
    /// The UUID namespace: the 16 ASCII bytes `NightscoutRocks!`
    /// (`4e696768-7473-636f-7574-526f636b7321`).
    public static let namespace: [UInt8] = Array("NightscoutRocks!".utf8)

    /// The name hashed for a document: `"<device>_<date>"`, or `"<device>_<date>_<eventType>"`
    /// when `eventType` is non-empty; a missing device is the literal `undefined`.
    public static func name(device: String?, date: Int64, eventType: String?) -> String {
        var n = (device ?? "undefined") + "_" + String(date)
        if let eventType, !eventType.isEmpty { n += "_" + eventType }
        return n
    }

    /// The identifier the server computes when a v3 document has none: UUID v5 (SHA-1) of
    /// `name(device:date:eventType:)` in `namespace`, lowercase.
    public static func compute(device: String?, date: Int64, eventType: String? = nil) -> String {
        uuidV5(namespace: namespace, name: name(device: device, date: date, eventType: eventType))
    }

    /// RFC 4122 UUID version 5 of `name` (UTF-8) in the 16-byte `namespace`, lowercase text.
    public static func uuidV5(namespace: [UInt8], name: String) -> String {
        var bytes = Array(Insecure.SHA1.hash(data: namespace + Array(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        return hex[0..<4].joined() + "-" + hex[4..<6].joined() + "-" + hex[6..<8].joined() + "-"
            + hex[8..<10].joined() + "-" + hex[10..<16].joined()
    }
}

extension NightscoutDocument {
    /// The identifier the v3 server would compute for this document (spec §3.9) from `device`
    /// and `date` (else `created_at`); `nil` without a time. Treatments add their `eventType`.
    public var computedIdentifier: String? {
        guard let ms = (common.date ?? common.createdAt)?.epochMilliseconds else { return nil }
        let eventType = (self as? Treatment)?.eventType?.rawValue
        return NightscoutIdentifier.compute(device: common.device, date: ms, eventType: eventType)
    }
}
