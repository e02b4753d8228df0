import AsyncHTTPClient
import Foundation
import NIOCore
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

    /// The process-wide client: redirects are not followed (the SSO flows follow them themselves,
    /// keeping cookies). It lives as long as the process, so it is never shut down.
    static let sharedClient = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(redirectConfiguration: .disallow))

    /// A transport over AsyncHTTPClient reading at most `maximumBodyBytes` of each body.
    /// Failures become ``GarminError/transport(_:)`` naming the failure and the URL path only.
    public static func asyncHTTPClient(maximumBodyBytes: Int = 16 * 1024 * 1024) -> GarminTransport {
        GarminTransport { request, timeout in
            var req = HTTPClientRequest(url: request.url.absoluteString)
            req.method = .init(rawValue: request.method)
            for (n, v) in request.headers { req.headers.add(name: n, value: v) }
            if let body = request.body { req.body = .bytes(ByteBuffer(bytes: body)) }
            let what = "\(request.method) \(request.url.path)"
            let response: HTTPClientResponse
            do {
                response = try await sharedClient.execute(req, timeout: .milliseconds(Int64((timeout * 1000).rounded())))
            } catch {
                throw GarminError.transport("\(what): \(describe(error))")
            }
            let buffer: ByteBuffer
            do {
                buffer = try await response.body.collect(upTo: maximumBodyBytes)
            } catch is NIOTooManyBytesError {
                throw GarminError.transport("\(what): response body exceeds \(maximumBodyBytes) bytes")
            } catch {
                throw GarminError.transport("\(what): \(describe(error))")
            }
            return GarminHTTPResponse(
                status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                body: Data(buffer.readableBytesView))
        }
    }

    /// A short, credential-free name for a transport error.
    static func describe(_ error: any Error) -> String {
        if let e = error as? HTTPClientError {
            if e == .deadlineExceeded || e == .readTimeout || e == .connectTimeout { return "timed out" }
            if e == .remoteConnectionClosed { return "connection closed by server" }
            return "HTTP client error (\(String(describing: e).prefix(80)))"
        }
        return String(describing: type(of: error)) + " (" + String(String(describing: error).prefix(80)) + ")"
    }
}
