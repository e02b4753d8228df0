import Foundation
import LookoutWire

/// One HTTP request as SignalKKit sends it (no cookies are ever attached).
public struct SignalKHTTPRequest: Sendable, Equatable {
    /// `GET`, `PUT`, `POST`, …
    public var method: String
    /// The absolute URL.
    public var url: URL
    /// Header fields in order (name, value).
    public var headers: [SignalKHTTPHeader]
    /// The body, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String, url: URL, headers: [SignalKHTTPHeader] = [], body: Data? = nil) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
    }

    /// The first value of a header (case-insensitive name).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// One HTTP header field.
public struct SignalKHTTPHeader: Sendable, Equatable {
    /// The field name.
    public var name: String
    /// The field value.
    public var value: String
    /// Creates a field.
    public init(_ name: String, _ value: String) { self.name = name; self.value = value }
}

/// An HTTP response: status, headers and the whole body.
public struct SignalKHTTPResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields (name, value).
    public var headers: [SignalKHTTPHeader]
    /// The body bytes.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [SignalKHTTPHeader] = [], body: Data = Data()) {
        self.status = status; self.headers = headers; self.body = body
    }
}

/// Sends HTTP requests. ``SignalKAsyncHTTPTransport`` is the real one; tests inject fakes.
public protocol SignalKHTTPTransport: Sendable {
    /// Sends one request and returns the whole response. Throws only for transport failures
    /// (a non-2xx status is a normal response).
    func send(_ request: SignalKHTTPRequest, timeout: Duration) async throws -> SignalKHTTPResponse
}

/// The production transport: LookoutWire's ``WireHTTPClient`` (async-http-client). Cookies are not
/// stored or sent, so a stale `JAUTHENTICATION` cookie can never override the Bearer token.
/// Redirects are followed only within the server's origin (scheme, host, port; at most 5): a
/// redirect elsewhere fails without a request there, so the token never leaves the configured server.
public struct SignalKAsyncHTTPTransport: SignalKHTTPTransport {
    /// The HTTP transport used.
    public let client: WireHTTPClient
    /// The largest body accepted.
    public let maxBodySize: Int

    /// Creates a transport over `client` (default: the process's).
    public init(client: WireHTTPClient = .shared, maxBodySize: Int = 32 << 20) {
        self.client = client; self.maxBodySize = maxBodySize
    }

    /// Sends the request, following same-origin redirects.
    public func send(_ request: SignalKHTTPRequest, timeout: Duration) async throws -> SignalKHTTPResponse {
        let wire = WireHTTPRequest(method: request.method, url: request.url,
                                   headers: request.headers.map { ($0.name, $0.value) }, body: request.body)
        let ms = Int64(SignalKSubscription.milliseconds(timeout))
        do {
            let r = try await client.send(wire, timeout: .milliseconds(max(1, ms)), maximumBodyBytes: maxBodySize, redirects: .sameOrigin)
            return SignalKHTTPResponse(status: r.status, headers: r.headers.map { SignalKHTTPHeader($0.name, $0.value) }, body: r.body)
        } catch let e as WireHTTPError {
            guard case .crossOriginRedirect(let target) = e.kind else { throw SignalKClientError.transport(e.description) }
            throw SignalKClientError.transport("\(e.method) \(e.path): the server redirects to another origin "
                + "(\(target)); the token goes only to the configured server, so the redirect was not followed")
        }
    }
}

/// Pauses for a duration; injectable so tests run without waiting.
public typealias SignalKSleep = @Sendable (Duration) async throws -> Void

enum SignalKHTTP {
    static let realSleep: SignalKSleep = { try await Task.sleep(for: $0) }

    /// Parses a body as JSON, or `nil` when it is not JSON.
    static func json(_ body: Data) -> JSONValue? {
        guard !body.isEmpty else { return nil }
        return try? SignalKJSON.parse(body)
    }

    /// The server's message from a body: JSON `message`/`error`, else the text; every one of
    /// `secrets` removed (before it is shortened).
    static func message(_ body: Data, secrets: [String] = []) -> String? {
        let clip = { (text: String) in SignalKClientError.clip(Redaction.text(text, secrets: secrets)) }
        if let j = json(body) {
            if let m = j["message"]?.stringValue ?? j["error"]?.stringValue { return clip(m) }
            if let s = j.stringValue { return clip(s) }
        }
        return clip(String(decoding: body, as: UTF8.self))
    }

    /// What `request` carries that a server must not get back into an error: the bearer token,
    /// query values (`?token=`) and a JSON body's `password` and `token`.
    static func secrets(of request: SignalKHTTPRequest) -> [String] {
        var out: [String] = []
        if let auth = request.header("Authorization"), let space = auth.firstIndex(of: " ") {
            out.append(String(auth[auth.index(after: space)...]).trimmingCharacters(in: .whitespaces))
        }
        for item in URLComponents(url: request.url, resolvingAgainstBaseURL: true)?.queryItems ?? [] {
            if let v = item.value { out.append(v) }
        }
        if let body = request.body, let j = json(body) {
            for key in ["password", "token"] { if let v = j[key]?.stringValue { out.append(v) } }
        }
        return out
    }

    /// The error for a failed response; the server's text loses what `req` carried
    /// (``secrets(of:)``): a hostile server's echo of the token never reaches an error.
    static func error(_ r: SignalKHTTPResponse, _ req: SignalKHTTPRequest) -> SignalKClientError {
        let text = message(r.body, secrets: secrets(of: req))
        if r.status == 401 || r.status == 403 { return .unauthorized(status: r.status, message: text) }
        return .http(status: r.status, method: req.method, path: req.url.path, message: text)
    }

    static func jsonBody(_ v: JSONValue) -> Data { Data(v.jsonString.utf8) }
}
