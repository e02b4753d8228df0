import Foundation

/// Errors raised by GarminKit. Descriptions never contain a password, token, ticket or secret:
/// URLs are shown without their query and response bodies are redacted and truncated.
public enum GarminError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A non-success HTTP status: status, redacted body excerpt, URL without query.
    case http(status: Int, body: String, url: String)
    /// HTTP 429; `retryAfter` is the `Retry-After` header in seconds when sent. Never retried.
    case rateLimited(retryAfter: TimeInterval?)
    /// The SSO answered with a status other than success (`SSO error: <type>[: <message>]`).
    case sso(type: String, message: String)
    /// The SSO rejected the email or password (HTTP 401 on login).
    case invalidCredentials
    /// The widget sign-in page had no CSRF token.
    case missingCSRF
    /// The widget flow ended on a page whose title is not `Success`.
    case unexpectedTitle(String)
    /// The SSO success page or response carried no service ticket.
    case missingTicket
    /// No OAuth1 token: log in first.
    case notAuthenticated
    /// The OAuth1 token was rejected by the exchange (HTTP 401): log in again.
    case oauth1Invalid
    /// The account needs an MFA code and no handler was given (or the handler gave none).
    case mfaRequired
    /// The MFA code was rejected.
    case mfaCodeInvalid
    /// A response that could not be decoded (what was expected).
    case decoding(String)
    /// The request did not complete: connection failure, timeout, oversized body.
    case transport(String)
    /// A configuration or argument that cannot be used.
    case invalidConfiguration(String)
    /// The token directory could not be read or written.
    case tokenStore(String)

    /// The HTTP status behind the error, if the server answered.
    public var status: Int? {
        switch self {
        case .http(let s, _, _): return s
        case .rateLimited: return 429
        case .invalidCredentials, .oauth1Invalid: return 401
        default: return nil
        }
    }

    /// Whether repeating later may succeed (transport failures, 408, 429, 5xx).
    public var isRetryable: Bool {
        switch self {
        case .transport, .rateLimited: return true
        case .http(let s, _, _): return s == 408 || s >= 500
        default: return false
        }
    }

    /// The server's requested wait (429 `Retry-After`), if any.
    public var retryAfter: TimeInterval? {
        if case .rateLimited(let after) = self { return after }
        return nil
    }

    /// A human-readable summary without secrets.
    public var description: String {
        switch self {
        case .http(let s, let body, let url):
            return "Garmin: HTTP \(s) for \(url)" + (body.isEmpty ? "" : ": " + body)
        case .rateLimited(let after):
            return "Garmin: rate limited (HTTP 429)" + (after.map { "; retry after \(Int($0.rounded(.up))) s" } ?? "")
        case .sso(let type, let message): return "Garmin: SSO error: \(type)" + (message.isEmpty ? "" : ": \(message)")
        case .invalidCredentials: return "Garmin: invalid email or password"
        case .missingCSRF: return "Garmin: Couldn't find CSRF token"
        case .unexpectedTitle(let t): return "Garmin: Unexpected title: \(t)"
        case .missingTicket: return "Garmin: no service ticket in the SSO response"
        case .notAuthenticated: return "Garmin: not logged in (no OAuth1 token)"
        case .oauth1Invalid: return "Garmin: the OAuth1 token was rejected; log in again"
        case .mfaRequired: return "Garmin: an MFA code is required"
        case .mfaCodeInvalid: return "Garmin: the MFA code was rejected"
        case .decoding(let m): return "Garmin: cannot decode response: \(m)"
        case .transport(let m): return "Garmin: transport failure: \(m)"
        case .invalidConfiguration(let m): return "Garmin: invalid configuration: \(m)"
        case .tokenStore(let m): return "Garmin: token store: \(m)"
        }
    }
}

/// Redaction of secrets in text that came from a server or a URL.
enum GarminRedaction {
    /// Keys whose values are masked in bodies (JSON `"key": "v"` and form `key=v`).
    static let secretKeys = [
        "access_token", "refresh_token", "oauth_token_secret", "oauth_token", "mfa_token", "jti", "password",
        "serviceTicketId", "ticket", "consumer_secret", "consumer_key", "_csrf", "id_token", "mfaVerificationCode",
    ]

    /// `text` with the values of secret keys and `ST-…` tickets masked, truncated to `limit`.
    static func redact(_ text: String, limit: Int = 200) -> String {
        var out = text
        for key in secretKeys {
            out = replace(out, pattern: "(\"\(key)\"\\s*:\\s*\")[^\"]*(\")", with: "$1***$2")
            out = replace(out, pattern: "(\(key)=)[^&\\s\"]+", with: "$1***")
        }
        out = replace(out, pattern: "ST-[A-Za-z0-9-]+", with: "ST-***")
        out = replace(out, pattern: "(Bearer|OAuth)\\s+[^\\s\"]+", with: "$1 ***")
        return out.count > limit ? String(out.prefix(limit)) + "…" : out
    }

    /// A URL as shown in errors: scheme, host, port and path, no query.
    static func url(_ url: URL) -> String {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: false)
        c?.query = nil
        c?.fragment = nil
        c?.user = nil
        c?.password = nil
        return c?.string ?? "(url)"
    }

    private static func replace(_ s: String, pattern: String, with template: String) -> String {
        guard let re = try? NSRegularExpression(pattern: pattern) else { return s }
        return re.stringByReplacingMatches(in: s, range: NSRange(s.startIndex..., in: s), withTemplate: template)
    }
}
