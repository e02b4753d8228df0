import AsyncHTTPClient
import Foundation
import NIOCore

/// Sends `NightscoutRequest`s and returns raw `NightscoutHTTPResponse`s (any status). The
/// default implementation uses AsyncHTTPClient; tests may inject their own function.
public struct NightscoutTransport: Sendable {
    /// Performs one request with a timeout in seconds.
    public typealias Send = @Sendable (_ request: NightscoutRequest, _ timeout: TimeInterval) async throws
        -> NightscoutHTTPResponse

    /// The send function.
    public let send: Send

    /// Wraps a send function.
    public init(send: @escaping Send) { self.send = send }

    /// A transport over AsyncHTTPClient (`HTTPClient.shared` by default) that reads at most
    /// `maximumBodyBytes` of each response body. Failures become `NightscoutError.transport`
    /// (whose text names the failure kind and the URL path, never headers or credentials).
    public static func asyncHTTPClient(_ client: HTTPClient = .shared, maximumBodyBytes: Int = 16 * 1024 * 1024)
        -> NightscoutTransport
    {
        NightscoutTransport { request, timeout in
            var req = HTTPClientRequest(url: request.url.absoluteString)
            req.method = .init(rawValue: request.method)
            for h in request.headers { req.headers.add(name: h.name, value: h.value) }
            if let body = request.body { req.body = .bytes(ByteBuffer(bytes: body)) }
            let path = NightscoutTransport.redactedPath(request.url.path)
            let response: HTTPClientResponse
            do {
                response = try await client.execute(req, timeout: .milliseconds(Int64((timeout * 1000).rounded())))
            } catch {
                throw NightscoutError.transport("\(request.method) \(path): \(NightscoutTransport.describe(error))")
            }
            let buffer: ByteBuffer
            do {
                buffer = try await response.body.collect(upTo: maximumBodyBytes)
            } catch is NIOTooManyBytesError {
                throw NightscoutError.transport("\(request.method) \(path): response body exceeds \(maximumBodyBytes) bytes")
            } catch {
                throw NightscoutError.transport("\(request.method) \(path): \(NightscoutTransport.describe(error))")
            }
            var headers: [String: String] = [:]
            for h in response.headers where headers[h.name] == nil { headers[h.name] = h.value }
            return NightscoutHTTPResponse(status: Int(response.status.code), headers: headers, body: Data(buffer.readableBytesView))
        }
    }

    /// `path` with the access token of a JWT exchange (`/authorization/request/{token}`) redacted.
    static func redactedPath(_ path: String) -> String {
        guard let r = path.range(of: "/authorization/request/") else { return path }
        return String(path[..<r.upperBound]) + "<redacted>"
    }

    /// A short, credential-free name for a transport error.
    static func describe(_ error: any Error) -> String {
        if let e = error as? HTTPClientError {
            if e == .deadlineExceeded || e == .readTimeout || e == .connectTimeout { return "timed out" }
            if e == .remoteConnectionClosed { return "connection closed by server" }
            return "HTTP client error (\(String(describing: e).prefix(120)))"
        }
        return String(describing: type(of: error)) + " (" + String(String(describing: error).prefix(120)) + ")"
    }
}
