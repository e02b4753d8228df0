import Foundation

/// Errors raised by NightscoutKit. Descriptions never contain a secret, token or JWT.
public enum NightscoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server rejected the credentials (401), with the server's message.
    case unauthorized(message: String)
    /// A previous login failed; no new attempt is made before the server's brute-force delay
    /// (spec §1.5) has passed. `retryAfter` is the remaining wait in seconds.
    case authenticationBackoff(retryAfter: TimeInterval)
    /// A non-success HTTP status with the response body text (truncated).
    case http(status: Int, body: String)
    /// A response that could not be decoded.
    case decoding(String)
    /// Credentials that cannot be used for this operation (e.g. an API secret for API v3).
    case unsupportedCredentials(String)
    /// A request that cannot be built (bad site URL, bad parameter).
    case invalidRequest(String)
    /// The server is overloaded or rate-limiting (429 Too Many Requests, 503 Service
    /// Unavailable); `retryAfter` is the `Retry-After` header in seconds, if sent.
    case temporarilyUnavailable(status: Int, retryAfter: TimeInterval?, body: String)
    /// The request did not complete: connection failure, timeout, or a response body larger than
    /// the client's limit. The text names the failure, never a credential.
    case transport(String)

    /// The HTTP status behind the error, if the server answered.
    public var status: Int? {
        switch self {
        case .unauthorized: return 401
        case .http(let status, _), .temporarilyUnavailable(let status, _, _): return status
        default: return nil
        }
    }

    /// Whether repeating the same request later may succeed: transport failures, 408, 429,
    /// 500, 502, 503 and 504. Authentication failures are not retryable (spec §1.5).
    public var isRetryable: Bool {
        switch self {
        case .transport, .temporarilyUnavailable: return true
        case .http(let status, _): return [408, 500, 502, 503, 504].contains(status)
        default: return false
        }
    }

    /// The server's requested wait before retrying (`Retry-After` or the login backoff), if any.
    public var retryAfter: TimeInterval? {
        switch self {
        case .temporarilyUnavailable(_, let after, _): return after
        case .authenticationBackoff(let after): return after
        default: return nil
        }
    }

    /// A human-readable summary.
    public var description: String {
        switch self {
        case .unauthorized(let m): return "Nightscout: unauthorized (\(m))"
        case .authenticationBackoff(let s): return "Nightscout: login failed recently; retry in \(Int(s.rounded(.up))) s"
        case .http(let status, let body): return "Nightscout: HTTP \(status)\(body.isEmpty ? "" : ": " + body)"
        case .decoding(let m): return "Nightscout: cannot decode response: \(m)"
        case .unsupportedCredentials(let m): return "Nightscout: unsupported credentials: \(m)"
        case .invalidRequest(let m): return "Nightscout: invalid request: \(m)"
        case .temporarilyUnavailable(let status, let after, let body):
            return "Nightscout: HTTP \(status) (temporarily unavailable"
                + (after.map { "; retry after \(Int($0.rounded(.up))) s" } ?? "") + ")" + (body.isEmpty ? "" : ": " + body)
        case .transport(let m): return "Nightscout: transport failure: \(m)"
        }
    }
}
