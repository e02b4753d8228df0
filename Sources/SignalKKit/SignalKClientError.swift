import Foundation

/// An error from the networking side of SignalKKit (REST, PUT, access requests, login, stream).
///
/// Descriptions name the request and the HTTP status but **never contain a token**: tokens are
/// never stored in an error value.
public enum SignalKClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with a non-success HTTP status. `message` is the server's text (or its
    /// JSON `message` member), shortened.
    case http(status: Int, method: String, path: String, message: String?)
    /// The server rejected the credentials (HTTP 401, or 403): the token is missing, expired or
    /// revoked, or the login failed.
    case unauthorized(status: Int, message: String?)
    /// A PUT (or other request/response exchange) finished without success: `state` is
    /// `COMPLETED`/`FAILED`, `statusCode` the reply's status (405 = not controllable,
    /// 401/403 = needs permission, 502/504 = device failed).
    case requestFailed(state: String?, statusCode: Int?, message: String?)
    /// A request did not finish within its timeout (`what` names it).
    case timeout(String)
    /// The response could not be understood (not JSON, or a required member is missing).
    case invalidResponse(String)
    /// The connection failed (refused, reset, DNS, TLS, WebSocket upgrade refused, …).
    case transport(String)
    /// The server has no access requests (security is off: HTTP 404, or 501 per the spec).
    case accessRequestsUnavailable(status: Int)
    /// The administrator denied the access request; do not ask again until the user acts.
    case accessDenied
    /// The server refuses device access requests (HTTP 403).
    case accessRequestsRefused(message: String?)
    /// The URL cannot be used (wrong scheme, no host, …).
    case invalidURL(String)
    /// The stream or client was closed.
    case closed

    /// A human-readable explanation (never containing a token).
    public var description: String {
        switch self {
        case .http(let status, let method, let path, let message):
            return "\(method) \(path) failed with HTTP \(status)" + (message.map { ": \($0)" } ?? "")
        case .unauthorized(let status, let message):
            return "not authorised (HTTP \(status))" + (message.map { ": \($0)" } ?? "")
        case .requestFailed(let state, let statusCode, let message):
            return "request \(state ?? "unfinished") with status \(statusCode.map(String.init) ?? "none")"
                + (message.map { ": \($0)" } ?? "")
        case .timeout(let what): return "timed out: \(what)"
        case .invalidResponse(let why): return "invalid response: \(why)"
        case .transport(let why): return "connection failed: \(why)"
        case .accessRequestsUnavailable(let status):
            return "the server offers no access requests (HTTP \(status)); security is probably off"
        case .accessDenied: return "the access request was denied"
        case .accessRequestsRefused(let message):
            return "the server refuses device access requests" + (message.map { ": \($0)" } ?? "")
        case .invalidURL(let why): return "invalid URL: \(why)"
        case .closed: return "closed"
        }
    }

    /// Shortens server text for an error message and strips anything that looks like a JWT.
    static func clip(_ text: String?) -> String? {
        guard var t = text?.trimmingCharacters(in: .whitespacesAndNewlines), !t.isEmpty else { return nil }
        if t.count > 200 { t = String(t.prefix(200)) + "…" }
        // Never echo a token: JWTs start with "eyJ" (base64 of `{"`).
        if let r = t.range(of: "eyJ") { t = String(t[..<r.lowerBound]) + "<redacted>" }
        return t
    }
}
