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
    /// The credentials of the request it answers (``NightscoutCredentials/redactions``, set by
    /// ``NightscoutClient``'s transport): removed from every text built from this response for an
    /// error (``bodyText(limit:)``, ``errorMessage``), so a server that echoes them gets them
    /// printed nowhere. Not part of equality.
    public var redactions: [String] = []

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status; self.headers = headers; self.body = body
    }

    /// Equal status, headers and body.
    public static func == (a: NightscoutHTTPResponse, b: NightscoutHTTPResponse) -> Bool {
        a.status == b.status && a.headers == b.headers && a.body == b.body
    }

    /// The body as UTF-8 text with ``redactions`` removed, truncated to `limit` characters (for
    /// error messages).
    public func bodyText(limit: Int = 300) -> String {
        let text = Redaction.text(String(decoding: body, as: UTF8.self), secrets: redactions)
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    /// The `message` of a JSON error envelope (`{"status":401,"message":"…"}`), if any, with
    /// ``redactions`` removed.
    public var errorMessage: String? {
        guard let v = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
        return v["message"]?.stringValue.map { Redaction.text($0, secrets: redactions) }
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
