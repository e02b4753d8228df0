import AsyncHTTPClient
import Foundation
import NIOCore

/// Why a request through ``WireHTTPClient`` did not produce a response. Its texts name the
/// method, the path (``Redaction/path(_:)``) and the failure, never a header, a body, user info, a
/// query or a token in the path.
public struct WireHTTPError: Error, Sendable, CustomStringConvertible {
    /// The failure.
    public enum Kind: Sendable, Hashable {
        /// The request timeout passed (connected, but no complete answer in time).
        case timedOut
        /// Nothing answered the connection attempt within the connect timeout (a host that is
        /// down, unreachable or behind a firewall that drops packets).
        case connectTimedOut
        /// Nothing listens at the address (fails at once, not after the connect timeout).
        case connectionRefused
        /// The server closed the connection before answering.
        case connectionClosed
        /// The body is longer than the limit.
        case bodyTooLarge(limit: Int)
        /// More redirects than the policy's limit.
        case tooManyRedirects(limit: Int)
        /// A redirect to another origin, which was not followed (nothing was sent there).
        case crossOriginRedirect(targetOrigin: String)
        /// Anything else, described without secrets.
        case other(String)
    }

    /// The failure.
    public var kind: Kind
    /// The request's method.
    public var method: String
    /// The request's URL without secrets (``Redaction/url(_:)``).
    public var url: String
    /// The request's path without secrets (``Redaction/path(_:)``).
    public var path: String

    /// Creates an error for `request`.
    public init(_ kind: Kind, _ request: WireHTTPRequest) {
        self.kind = kind
        self.method = request.method
        self.url = Redaction.url(request.url)
        self.path = Redaction.path(request.url.path)
    }

    /// The failure alone, naming the server's origin (never its credentials) and what to check
    /// where that helps: `connection refused by http://host:port (is the server running, …)`.
    public var reason: String {
        switch kind {
        case .timedOut: return "timed out waiting for \(origin) to answer"
        case .connectTimedOut:
            return "connect to \(origin) timed out: no answer (is the host up and reachable from here, and are host and port right?)"
        case .connectionRefused:
            return "connection refused by \(origin): nothing listens there (is the server running, and are host and port right?)"
        case .connectionClosed: return "connection closed by server"
        case .bodyTooLarge(let limit): return "response body exceeds \(limit) bytes"
        case .tooManyRedirects(let limit): return "more than \(limit) redirects"
        case .crossOriginRedirect(let target): return "redirects to another origin (\(target)), not followed"
        case .other(let text): return text
        }
    }

    /// `scheme://host[:port]` of the request.
    var origin: String {
        guard let r = url.range(of: "://") else { return url }
        let rest = url[r.upperBound...]
        return String(url[..<r.upperBound]) + String(rest.prefix { $0 != "/" })
    }

    /// `METHOD /path: reason`.
    public var description: String { "\(method) \(path): \(reason)" }

    /// The kind of a lower layer's error, described without secrets (`url`'s are scrubbed).
    static func kind(of error: any Error, url: URL) -> Kind {
        if let e = error as? HTTPClientError {
            if e == .connectTimeout { return .connectTimedOut }
            if e == .deadlineExceeded || e == .readTimeout { return .timedOut }
            if e == .remoteConnectionClosed { return .connectionClosed }
            return .other(Redaction.scrub("HTTP client error (\(String(describing: e).prefix(120)))", of: url))
        }
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") { return .connectionRefused }
        return .other(Redaction.scrub(String(describing: type(of: error)) + " (" + String(text.prefix(120)) + ")", of: url))
    }
}
