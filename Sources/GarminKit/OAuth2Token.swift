import Foundation
import LookoutWire

/// The short-lived OAuth2 token from the exchange (garth `OAuth2Token`; spec §8, §10). All
/// fields are required; expiry times are integer Unix seconds.
public struct OAuth2Token: Sendable, Equatable, Codable, CustomStringConvertible {
    /// `scope`.
    public var scope: String
    /// `jti`.
    public var jti: String
    /// `token_type` (`bearer` or `Bearer`).
    public var tokenType: String
    /// `access_token` (never logged).
    public var accessToken: String
    /// `refresh_token` (never logged; garth never uses it).
    public var refreshToken: String
    /// `expires_in` seconds.
    public var expiresIn: Int
    /// `expires_at` Unix seconds.
    public var expiresAt: Int
    /// `refresh_token_expires_in` seconds.
    public var refreshTokenExpiresIn: Int
    /// `refresh_token_expires_at` Unix seconds.
    public var refreshTokenExpiresAt: Int

    /// Creates a token.
    public init(
        scope: String, jti: String, tokenType: String, accessToken: String, refreshToken: String, expiresIn: Int,
        expiresAt: Int, refreshTokenExpiresIn: Int, refreshTokenExpiresAt: Int
    ) {
        self.scope = scope; self.jti = jti; self.tokenType = tokenType; self.accessToken = accessToken
        self.refreshToken = refreshToken; self.expiresIn = expiresIn; self.expiresAt = expiresAt
        self.refreshTokenExpiresIn = refreshTokenExpiresIn; self.refreshTokenExpiresAt = refreshTokenExpiresAt
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case scope, jti
        case tokenType = "token_type"
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresIn = "expires_in"
        case expiresAt = "expires_at"
        case refreshTokenExpiresIn = "refresh_token_expires_in"
        case refreshTokenExpiresAt = "refresh_token_expires_at"
    }

    /// Decodes garth's JSON; integer fields also accept `1700000000.0` and `"1700000000"` (not fractions).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func int(_ k: CodingKeys) throws -> Int {
            if let i = try? c.decode(Int.self, forKey: k) { return i }
            if let d = try? c.decode(Double.self, forKey: k), d.rounded() == d, abs(d) < 1e15 { return Int(d) }
            if let s = try? c.decode(String.self, forKey: k), let i = Int(s) { return i }
            throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "\(k.rawValue) must be an integer")
        }
        scope = try c.decode(String.self, forKey: .scope)
        jti = try c.decode(String.self, forKey: .jti)
        tokenType = try c.decode(String.self, forKey: .tokenType)
        accessToken = try c.decode(String.self, forKey: .accessToken)
        refreshToken = try c.decode(String.self, forKey: .refreshToken)
        expiresIn = try int(.expiresIn)
        expiresAt = try int(.expiresAt)
        refreshTokenExpiresIn = try int(.refreshTokenExpiresIn)
        refreshTokenExpiresAt = try int(.refreshTokenExpiresAt)
    }

    /// Builds a token from an exchange response, computing the expiry times from `now` (§8).
    static func fromExchange(_ json: JSONValue, now: Date) throws -> OAuth2Token {
        func str(_ k: String) throws -> String {
            guard let s = json[k]?.stringValue else { throw GarminError.decoding("exchange response: \(k) missing or not a string") }
            return s
        }
        func int(_ k: String) throws -> Int {
            guard let i = json[k]?.int64Value else { throw GarminError.decoding("exchange response: \(k) missing or not an integer") }
            return Int(i)
        }
        let expiresIn = try int("expires_in"), refreshIn = try int("refresh_token_expires_in")
        let t = now.timeIntervalSince1970
        return OAuth2Token(
            scope: try str("scope"), jti: try str("jti"), tokenType: try str("token_type"),
            accessToken: try str("access_token"), refreshToken: try str("refresh_token"), expiresIn: expiresIn,
            expiresAt: Int((t + Double(expiresIn)).rounded(.down)), refreshTokenExpiresIn: refreshIn,
            refreshTokenExpiresAt: Int((t + Double(refreshIn)).rounded(.down)))
    }

    /// `expires_at < now`.
    public func isExpired(now: Date = Date()) -> Bool { Double(expiresAt) < now.timeIntervalSince1970 }
    /// `refresh_token_expires_at < now`.
    public func isRefreshExpired(now: Date = Date()) -> Bool { Double(refreshTokenExpiresAt) < now.timeIntervalSince1970 }
    /// The expiry as a date.
    public var expiresAtDate: Date { Date(timeIntervalSince1970: TimeInterval(expiresAt)) }

    /// `Authorization` header value: title-cased token type and the access token.
    public var authorizationHeader: String {
        let type = tokenType.isEmpty ? "Bearer" : tokenType.prefix(1).uppercased() + tokenType.dropFirst().lowercased()
        return "\(type) \(accessToken)"
    }

    /// The fields in garth's order, for the file writer.
    var pythonPairs: [(String, PythonJSONWriter.Scalar)] {
        [
            ("scope", .string(scope)), ("jti", .string(jti)), ("token_type", .string(tokenType)),
            ("access_token", .string(accessToken)), ("refresh_token", .string(refreshToken)), ("expires_in", .int(expiresIn)),
            ("expires_at", .int(expiresAt)), ("refresh_token_expires_in", .int(refreshTokenExpiresIn)),
            ("refresh_token_expires_at", .int(refreshTokenExpiresAt)),
        ]
    }

    /// Masks the tokens.
    public var description: String {
        "OAuth2Token(scope: \(scope), token_type: \(tokenType), access_token: ***, refresh_token: ***, expires_at: \(expiresAt))"
    }
}
