import AsyncHTTPClient
import Foundation
import Lua
import NIOCore

/// An expected failure of `http` (the `err` of `nil, err`).
///
/// Codes: `invalid_url`, `timeout`, `network` (connection refused or reset, DNS, TLS), `redirect`
/// (more than 5 redirects or a loop), `too_large` (body over `max_size`), `memory` (the bodies of
/// the script's requests in flight over its memory limit), `limit` (too many requests in flight),
/// `cancelled`, `refused` (a remote-command endpoint, or the host's own status server). Messages
/// name the request as `GET https://host/path`: never credentials, the query (it may carry a
/// token) or header values.
public struct HTTPFailure: Error, LuaErrorConvertible {
    /// The error as scripts see it.
    public var luaError: LuaErrorInfo

    private init(_ code: String, _ message: String, retryable: Bool) {
        luaError = LuaErrorInfo(code: code, message: message, retryable: retryable, service: "http")
    }

    /// The URL cannot be used.
    static func invalidURL(_ url: String, _ why: String) -> HTTPFailure {
        HTTPFailure("invalid_url", "invalid URL \(String(reflecting: display(url: url))): \(why)", retryable: false)
    }

    /// No complete answer within the timeout.
    public static func timeout(_ request: HTTPPreparedRequest) -> HTTPFailure {
        HTTPFailure(
            "timeout", "\(request.summary): no complete answer within \(Quantities.formatDuration(request.timeout))",
            retryable: true)
    }

    /// The body is larger than `max_size`.
    static func tooLarge(_ request: HTTPPreparedRequest) -> HTTPFailure {
        HTTPFailure(
            "too_large",
            "\(request.summary): response body larger than max_size \(Quantities.formatSize(request.maxSize)) "
                + "(\(request.maxSize) bytes); raise max_size to accept it", retryable: false)
    }

    /// The script's host memory budget (``LuaHostBytes``, as large as its memory limit) cannot hold
    /// this body: the bodies of its requests in flight already fill it.
    static func memory(_ request: HTTPPreparedRequest, what: String, limit: Int) -> HTTPFailure {
        HTTPFailure(
            "memory",
            "\(request.summary): the \(what) does not fit in what the host may buffer for this script "
                + "(\(Quantities.formatSize(limit)) for the bodies of all its requests in flight, the memory limit; see --memory-limit)",
            retryable: true)
    }

    /// The request (or a redirect it followed) addresses a Loop remote-command endpoint, which
    /// only the client methods may reach (see ``RemoteCommandEndpoints``).
    static func remoteCommand(_ method: String, _ url: String) -> HTTPFailure {
        HTTPFailure(
            "refused",
            "\(method) \(display(url: url)): refused: the http module does not send Loop remote commands "
                + "(/api/v2/notifications/loop, /api/v2/remotecommands). Use home:bolus, home:carbs or "
                + "home:remote_command on a nightscout.client profile: they pass the host's remote-command guard "
                + "(the profile's limits, confirmation and the audit log)", retryable: false)
    }

    /// The request (or a redirect it followed) addresses this host's own status server
    /// (``StatusPortGuard``).
    static func statusServer(_ method: String, _ url: String) -> HTTPFailure {
        HTTPFailure(
            "refused",
            "\(method) \(display(url: url)): refused: this is the status server of the serve running this script; "
                + "scripts cannot reach it (alert.ack acknowledges an alert from a script)",
            retryable: false)
    }

    /// Maps what the transport threw.
    static func map(_ error: any Error, _ request: HTTPPreparedRequest) -> HTTPFailure {
        if let failure = error as? HTTPFailure { return failure }
        if error is CancellationError { return HTTPFailure("cancelled", "\(request.summary): cancelled", retryable: false) }
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .connectTimeout, .readTimeout, .writeTimeout, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout:
                return timeout(request)
            case .invalidURL, .emptyHost, .emptyScheme:
                return invalidURL(request.url, "not a valid absolute URL")
            case .redirectLimitReached:
                return HTTPFailure(
                    "redirect", "\(request.summary): more than \(HTTPRequestSpec.maxRedirects) redirects",
                    retryable: false)
            case .redirectCycleDetected:
                return HTTPFailure("redirect", "\(request.summary): redirect loop", retryable: false)
            case .cancelled:
                return HTTPFailure("cancelled", "\(request.summary): cancelled", retryable: false)
            case .remoteConnectionClosed:
                return HTTPFailure("network", "\(request.summary): the server closed the connection", retryable: true)
            default:
                return HTTPFailure("network", "\(request.summary): \(client.description)", retryable: true)
            }
        }
        let typeName = String(reflecting: type(of: error))
        if typeName.contains("SSL") || typeName.contains("TLS") {
            return HTTPFailure("network", "\(request.summary): TLS error: \(error)", retryable: false)
        }
        return HTTPFailure("network", "\(request.summary): cannot connect: \(reason(error))", retryable: true)
    }

    /// The system's words for the first `IOError` inside `error` (NIO wraps connect failures, e.g.
    /// in `NIOConnectionError.connectionErrors`), else the error's description.
    private static func reason(_ error: any Error) -> String {
        if let io = findIOError(in: error, depth: 0) {
            return String(cString: strerror(io.errnoCode)).lowercased()
        }
        return String(describing: error)
    }

    private static func findIOError(in value: Any, depth: Int) -> IOError? {
        if let io = value as? IOError { return io }
        guard depth < 4 else { return nil }
        for child in Mirror(reflecting: value).children {
            if let found = findIOError(in: child.value, depth: depth + 1) { return found }
        }
        return nil
    }

    /// A URL for messages: no user info, no query, no fragment (they may hold secrets).
    static func display(url: String) -> String {
        var text = url
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = String(text[..<cut]) }
        if let schemeEnd = text.range(of: "://") {
            let authorityStart = schemeEnd.upperBound
            let authorityEnd = text[authorityStart...].firstIndex(of: "/") ?? text.endIndex
            if let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") {
                text.replaceSubrange(authorityStart...at, with: "")
            }
        }
        if text.count > 200 { text = String(text.prefix(200)) + "…" }
        return text
    }
}
