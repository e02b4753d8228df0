import Foundation
import LookoutWire

/// What can go wrong talking to Northlight (the seed's `NorthlightError`, with Sendable payloads).
/// Descriptions never contain the API key.
public enum NorthlightError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server refused the API key (401 or 403), or the key cannot be used at all.
    case invalidAPIKey
    /// The request did not complete (connection refused, timeout, TLS, body too large). The text
    /// names the failure and the endpoint, never a header.
    case networkError(String)
    /// Too many requests for the project's tier (429). `retryAfter` is the server's
    /// `Retry-After` in seconds, when it sent one.
    case rateLimitExceeded(retryAfter: TimeInterval?)
    /// The free tier's item limit (5 items) is reached.
    case feedbackLimitReached
    /// Input the client or the server refused; the text starts with the field
    /// (`title: required`).
    case invalidInput(String)
    /// Any other refusal or a server failure, with its HTTP status.
    case serverError(statusCode: Int)
    /// A successful answer that could not be read.
    case invalidResponse(String)

    /// The HTTP status behind the error, when the server answered.
    public var status: Int? {
        switch self {
        case .serverError(let code): return code
        case .rateLimitExceeded: return 429
        default: return nil
        }
    }

    /// Whether sending the same request later may succeed: network failures, 429, 408 and 5xx.
    public var isRetryable: Bool {
        switch self {
        case .networkError, .rateLimitExceeded: return true
        case .serverError(let code): return code == 408 || code >= 500
        default: return false
        }
    }

    /// The server's requested wait in seconds (429 with `Retry-After`).
    public var retryAfter: TimeInterval? {
        if case .rateLimitExceeded(let after) = self { return after }
        return nil
    }

    /// The field an `invalidInput` names (the text before the first colon).
    public var field: String? {
        guard case .invalidInput(let text) = self, let colon = text.firstIndex(of: ":") else { return nil }
        return String(text[..<colon])
    }

    /// This error with every occurrence of each of `secrets` (and anything shaped like a token)
    /// removed from its text (``Redaction/text(_:secrets:)``): for texts that quote a server.
    public func redacting(_ secrets: [String]) -> NorthlightError {
        switch self {
        case .networkError(let m): return .networkError(Redaction.text(m, secrets: secrets))
        case .invalidInput(let m): return .invalidInput(Redaction.text(m, secrets: secrets))
        case .invalidResponse(let m): return .invalidResponse(Redaction.text(m, secrets: secrets))
        default: return self
        }
    }

    /// A short machine-readable kind: `invalid_api_key`, `network`, `rate_limited`,
    /// `feedback_limit`, `invalid_input`, `server`, `invalid_response`.
    public var kind: String {
        switch self {
        case .invalidAPIKey: return "invalid_api_key"
        case .networkError: return "network"
        case .rateLimitExceeded: return "rate_limited"
        case .feedbackLimitReached: return "feedback_limit"
        case .invalidInput: return "invalid_input"
        case .serverError: return "server"
        case .invalidResponse: return "invalid_response"
        }
    }

    /// A human-readable summary.
    public var description: String {
        switch self {
        case .invalidAPIKey: return "Northlight: invalid API key"
        case .networkError(let m): return "Northlight: network error: \(m)"
        case .rateLimitExceeded(let after):
            return "Northlight: rate limit exceeded" + (after.map { "; retry after \(Int($0.rounded(.up))) s" } ?? "")
        case .feedbackLimitReached: return "Northlight: feedback limit reached (free tier: 5 items)"
        case .invalidInput(let m): return "Northlight: invalid input: \(m)"
        case .serverError(let code): return "Northlight: server error (HTTP \(code))"
        case .invalidResponse(let m): return "Northlight: invalid response: \(m)"
        }
    }
}
