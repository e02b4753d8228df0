import Foundation

/// One HTTP request as ``WireHTTPClient`` sends it.
public struct WireHTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The absolute URL.
    public var url: URL
    /// Header fields in order (several of one name allowed). Never written to errors or logs.
    public var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String, url: URL, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
    }
}

/// One HTTP response: status, headers as received, and the whole body.
public struct WireHTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields in order, names as received.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status; self.headers = headers; self.body = body
    }

    /// The first value of a header (case-insensitive name).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}
