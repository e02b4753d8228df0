import Foundation
import LookoutWire

/// Reading a JWT's payload without verifying it (the client cannot: the key is the server's).
public enum JWTPayload {
    /// The decoded payload object of a `header.payload.signature` token, or `nil`.
    public static func decode(_ token: String) -> [String: JSONValue]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var b64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64),
              let value = try? JSONDecoder().decode(JSONValue.self, from: data) else { return nil }
        return value.objectValue
    }

    /// The `exp` claim (Unix seconds) as a `Date`, or `nil`.
    public static func expiration(of token: String) -> Date? {
        guard let exp = decode(token)?["exp"]?.lenientDoubleValue else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}

/// The answer of `GET /api/v2/authorization/request/{accessToken}` (spec §1.3).
public struct JWTGrant: Sendable, Equatable, Decodable, CustomStringConvertible, CustomReflectable {
    /// The JWT.
    public var token: String
    /// The subject name.
    public var sub: String?
    /// One permission list per role.
    public var permissionGroups: [[String]]?
    /// Issued at, Unix seconds.
    public var iat: Double?
    /// Expiry, Unix seconds.
    public var exp: Double?

    /// Creates a grant.
    public init(token: String, sub: String? = nil, permissionGroups: [[String]]? = nil, iat: Double? = nil, exp: Double? = nil) {
        self.token = token; self.sub = sub; self.permissionGroups = permissionGroups; self.iat = iat; self.exp = exp
    }

    /// The expiry: the JWT payload's `exp`, else the response's `exp`.
    public var expiresAt: Date? {
        JWTPayload.expiration(of: token) ?? exp.map { Date(timeIntervalSince1970: $0) }
    }

    /// A mirror showing only the redacted description.
    public var customMirror: Mirror { Mirror(self, children: ["grant": description]) }

    /// Redacted: the subject and expiry, never the token.
    public var description: String {
        // A server's `exp` may be any number (1e19): shown as written when no Int64 holds it.
        let expiry = exp.map { $0.isFinite && abs($0) < 9e15 ? String(Int64($0)) : String($0) } ?? "?"
        return "JWTGrant(sub: \(sub ?? "?"), exp: \(expiry), token: <redacted>)"
    }
}
