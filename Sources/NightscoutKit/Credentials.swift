import Crypto
import Foundation

/// How a client proves itself to Nightscout (spec §1). Secrets are never printed: `description`,
/// `debugDescription` and reflection show only the kind of credential.
public enum NightscoutCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// No credentials (the server's default roles apply).
    case none
    /// The site's `API_SECRET` (v1/v2 only; sent as its SHA-1 hex in `api-secret`).
    case apiSecret(String)
    /// An access token of a subject (`name-0123456789abcdef`); v1 sends it hashed in
    /// `api-secret`, v3 exchanges it for a JWT.
    case accessToken(String)
    /// A JWT (`Authorization: Bearer`), valid for v1 and v3 until it expires.
    case jwt(String)

    /// Lowercase hex SHA-1 of the UTF-8 text.
    public static func sha1Hex(_ text: String) -> String {
        Insecure.SHA1.hash(data: Array(text.utf8)).map { byte in
            let h = String(byte, radix: 16)
            return byte < 16 ? "0" + h : h
        }.joined()
    }

    /// The value of the v1 `api-secret` header: SHA-1 hex of the secret or access token
    /// (the server accepts `sha1hex(accessToken)`, §1.2); `nil` for JWT and none.
    public var apiSecretHeaderValue: String? {
        switch self {
        case .apiSecret(let s), .accessToken(let s): return NightscoutCredentials.sha1Hex(s)
        case .jwt, .none: return nil
        }
    }

    /// Every text these credentials put on the wire (the secret or token, its SHA-1 hex, the
    /// JWT): what an error quoting a server must not repeat (``NightscoutHTTPResponse/redactions``).
    public var redactions: [String] {
        switch self {
        case .none: return []
        case .apiSecret(let s), .accessToken(let s): return [s, NightscoutCredentials.sha1Hex(s), NightscoutCredentials.sha1Hex(s).uppercased()]
        case .jwt(let token): return [token]
        }
    }

    /// The headers that authenticate a v1/v2 request.
    public var v1Headers: [(name: String, value: String)] {
        switch self {
        case .none: return []
        case .apiSecret, .accessToken: return [("api-secret", apiSecretHeaderValue!)]
        case .jwt(let token): return [("Authorization", "Bearer " + token)]
        }
    }

    /// A short, one-way name for these credentials (`jwt:` and 16 hex digits of a SHA-256 over the
    /// kind and value; `none` without credentials), to tell clients with different credentials apart
    /// (outbox queues) without keeping the secret. It is not the `api-secret` header value.
    public var fingerprint: String {
        let (kind, value): (String, String)
        switch self {
        case .none: return "none"
        case .apiSecret(let s): (kind, value) = ("secret", s)
        case .accessToken(let s): (kind, value) = ("token", s)
        case .jwt(let s): (kind, value) = ("jwt", s)
        }
        let digest = SHA256.hash(data: Array("lookout-credential\n\(kind)\n\(value)".utf8))
        return kind + ":" + digest.prefix(8).map { byte in
            let h = String(byte, radix: 16)
            return byte < 16 ? "0" + h : h
        }.joined()
    }

    /// Whether API v3 can be used: it needs a JWT, directly or exchanged from an access token.
    public var supportsV3: Bool {
        switch self {
        case .accessToken, .jwt: return true
        case .apiSecret, .none: return false
        }
    }

    /// The kind of credential, never its value.
    public var description: String {
        switch self {
        case .none: return "NightscoutCredentials.none"
        case .apiSecret: return "NightscoutCredentials.apiSecret(<redacted>)"
        case .accessToken: return "NightscoutCredentials.accessToken(<redacted>)"
        case .jwt: return "NightscoutCredentials.jwt(<redacted>)"
        }
    }

    /// Same as `description` (redacted).
    public var debugDescription: String { description }

    /// A mirror without the secret, so `dump` stays redacted.
    public var customMirror: Mirror { Mirror(self, children: ["kind": description]) }
}
