import Foundation
import LookoutWire

/// A minimal HTTP response as seen by NightscoutKit's injectable transport functions.
public struct NightscoutHTTPResponse: Sendable, Equatable {
    /// Status code.
    public var status: Int
    /// Response headers (names as received).
    public var headers: [String: String]
    /// Body bytes.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status; self.headers = headers; self.body = body
    }

    /// The body as UTF-8 text, truncated to `limit` characters (for error messages).
    public func bodyText(limit: Int = 300) -> String {
        let text = String(decoding: body, as: UTF8.self)
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    /// The `message` of a JSON error envelope (`{"status":401,"message":"…"}`), if any.
    public var errorMessage: String? {
        guard let v = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
        return v["message"]?.stringValue
    }

    /// The first value of a header, matching the name case-insensitively.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.key.lowercased() == lower }?.value
    }

    /// `Retry-After` in seconds: delta-seconds or an HTTP date (relative to now); `nil` if absent
    /// or unreadable.
    public var retryAfter: TimeInterval? {
        header("Retry-After").flatMap { HTTPDate.retryAfter($0) }
    }
}
