import Foundation
import LookoutWire
import LookoutWire

/// One HTTP request as GarminKit sends it.
public struct GarminHTTPRequest: Sendable {
    /// Method (`GET`, `POST`, …).
    public var method: String
    /// Full URL with query.
    public var url: URL
    /// Headers in order.
    public var headers: [(String, String)]
    /// Body bytes, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String, url: URL, headers: [(String, String)] = [], body: Data? = nil) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
    }
}

/// One HTTP response (any status; redirects are not followed by the transport).
public struct GarminHTTPResponse: Sendable {
    /// Status code.
    public var status: Int
    /// Headers in order, names as received (several `Set-Cookie`s kept).
    public var headers: [(String, String)]
    /// Body bytes.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status; self.headers = headers; self.body = body
    }

    /// The first value of a header (case-insensitive name).
    public func header(_ name: String) -> String? {
        let n = name.lowercased()
        return headers.first { $0.0.lowercased() == n }?.1
    }

    /// All values of a header (case-insensitive name).
    public func headers(_ name: String) -> [String] {
        let n = name.lowercased()
        return headers.filter { $0.0.lowercased() == n }.map(\.1)
    }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// `Retry-After` in seconds: delta-seconds, or an HTTP date (seconds from now, at least 0);
    /// nil when absent or unreadable.
    public var retryAfter: TimeInterval? { retryAfter(now: Date()) }

    /// `Retry-After` relative to `now`.
    public func retryAfter(now: Date) -> TimeInterval? {
        header("Retry-After").flatMap { HTTPDate.retryAfter($0, now: now) }
    }
}

/// Sends requests. The default uses AsyncHTTPClient without following redirects; tests may
/// inject their own function.
public struct GarminTransport: Sendable {
    /// Performs one request with a timeout in seconds.
    public typealias Send = @Sendable (_ request: GarminHTTPRequest, _ timeout: TimeInterval) async throws -> GarminHTTPResponse

    /// The send function.
    public let send: Send

    /// Wraps a send function.
    public init(send: @escaping Send) { self.send = send }

    /// A transport over LookoutWire's ``WireHTTPClient`` reading at most `maximumBodyBytes` of each
    /// body. Redirects are not followed (the SSO flows follow them themselves, keeping cookies).
    /// Failures become ``GarminError/transport(_:)`` naming the failure and the URL path only.
    public static func asyncHTTPClient(_ client: WireHTTPClient = .shared, maximumBodyBytes: Int = 16 * 1024 * 1024) -> GarminTransport {
        GarminTransport { request, timeout in
            let wire = WireHTTPRequest(method: request.method, url: request.url,
                                       headers: request.headers.map { ($0.0, $0.1) }, body: request.body)
            do {
                let response = try await client.send(wire, timeout: .milliseconds(Int64((timeout * 1000).rounded())),
                                                     maximumBodyBytes: maximumBodyBytes, redirects: .none)
                return GarminHTTPResponse(status: response.status, headers: response.headers.map { ($0.name, $0.value) },
                                          body: response.body)
            } catch let error as WireHTTPError {
                throw GarminError.transport(error.description)
            }
        }
    }
}
