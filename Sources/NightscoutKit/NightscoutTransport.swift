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

    /// The process's client for Nightscout: it follows no redirect itself (``asyncHTTPClient(_:maximumBodyBytes:)``
    /// follows same-origin ones), so credentials never leave the site's origin. Never shut down.
    public static let noRedirectClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Most same-origin redirects followed for one request.
    public static let maximumRedirects = 5

    /// A transport over AsyncHTTPClient that reads at most `maximumBodyBytes` of each response body.
    /// Failures become `NightscoutError.transport` (whose text names the failure kind and the URL
    /// path, never headers or credentials).
    ///
    /// Redirects are followed only within the site's origin (scheme, host and port), at most
    /// ``maximumRedirects``; a redirect to another origin fails without a request to it, so the
    /// credentials (`api-secret`, `Authorization`, a token in the path) never go anywhere else.
    /// `client` must not follow redirects itself (the default does not).
    public static func asyncHTTPClient(_ client: HTTPClient = noRedirectClient, maximumBodyBytes: Int = 16 * 1024 * 1024)
        -> NightscoutTransport
    {
        NightscoutTransport { request, timeout in
            var current = request
            for _ in 0...maximumRedirects {
                let response = try await once(current, timeout: timeout, client: client, maximumBodyBytes: maximumBodyBytes)
                guard let next = try redirect(from: current, response) else { return response }
                current = next
            }
            throw NightscoutError.transport("\(request.method) \(redactedPath(request.url.path)): more than \(maximumRedirects) redirects")
        }
    }

    /// The request to send after `response`, if it is a redirect within the origin of `request`.
    /// - Throws: `transport` for a redirect to another origin (nothing is sent there).
    static func redirect(from request: NightscoutRequest, _ response: NightscoutHTTPResponse) throws -> NightscoutRequest? {
        guard [301, 302, 303, 307, 308].contains(response.status),
              let location = response.headers.first(where: { $0.key.lowercased() == "location" })?.value,
              let target = URL(string: location, relativeTo: request.url)?.absoluteURL else { return nil }
        guard sameOrigin(request.url, target) else {
            throw NightscoutError.transport("\(request.method) \(redactedPath(request.url.path)): the site redirects to another origin "
                + "(\(origin(target))); credentials go only to the configured site, so the redirect was not followed: "
                + "set the site's url to where it redirects")
        }
        var next = request
        next.url = target
        if response.status == 303 || (response.status == 301 || response.status == 302) && request.method == "POST" {
            next.method = "GET"
            next.body = nil
            next.headers.removeAll { ["content-type", "content-length"].contains($0.name.lowercased()) }
        }
        return next
    }

    /// Whether `a` and `b` have the same scheme, host and port (default ports filled in).
    public static func sameOrigin(_ a: URL, _ b: URL) -> Bool { origin(a) == origin(b) }

    /// `scheme://host:port` of `url`, lower case, with the scheme's default port when none is given.
    public static func origin(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// One exchange, redirects not followed.
    private static func once(_ request: NightscoutRequest, timeout: TimeInterval, client: HTTPClient, maximumBodyBytes: Int)
        async throws -> NightscoutHTTPResponse
    {
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
