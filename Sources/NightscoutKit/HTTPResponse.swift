import Foundation

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
}
