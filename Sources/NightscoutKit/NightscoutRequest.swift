import Foundation

/// An HTTP request built by NightscoutKit, ready for any transport. `description` redacts the
/// `api-secret` and `Authorization` headers.
public struct NightscoutRequest: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// HTTP method.
    public var method: String
    /// Full URL.
    public var url: URL
    /// Headers, in order.
    public var headers: [Header]
    /// Body, if any.
    public var body: Data?

    /// One header field.
    public struct Header: Sendable, Equatable {
        /// Name.
        public var name: String
        /// Value.
        public var value: String
        /// Creates a header.
        public init(name: String, value: String) { self.name = name; self.value = value }
    }

    /// Creates a request.
    public init(method: String, url: URL, headers: [Header] = [], body: Data? = nil) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
    }

    /// The first value of a header (case-insensitive name).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Method, URL and header names; credential header values are redacted.
    public var description: String {
        let hs = headers.map { h -> String in
            let sensitive = ["api-secret", "authorization"].contains(h.name.lowercased())
            return h.name + ": " + (sensitive ? "<redacted>" : h.value)
        }
        return "\(method) \(url.absoluteString) [\(hs.joined(separator: ", "))]"
    }

    /// A mirror showing only the redacted description, so `dump` leaks no credentials.
    public var customMirror: Mirror { Mirror(self, children: ["request": description]) }

    /// Percent-encodes a query component: everything except `A–Z a–z 0–9 - . _ ~`.
    public static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 16 ? "0" : "") + hex
            }
        }
        return out
    }

    /// Encodes query items in order as `name=value&…`.
    public static func encodeQuery(_ items: [(String, String)]) -> String {
        items.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }
}
