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

    /// A human-readable summary.
    public var description: String {
        switch self {
        case .unauthorized(let m): return "Nightscout: unauthorized (\(m))"
        case .authenticationBackoff(let s): return "Nightscout: login failed recently; retry in \(Int(s.rounded(.up))) s"
        case .http(let status, let body): return "Nightscout: HTTP \(status)\(body.isEmpty ? "" : ": " + body)"
        case .decoding(let m): return "Nightscout: cannot decode response: \(m)"
        case .unsupportedCredentials(let m): return "Nightscout: unsupported credentials: \(m)"
        case .invalidRequest(let m): return "Nightscout: invalid request: \(m)"
        }
    }
}
