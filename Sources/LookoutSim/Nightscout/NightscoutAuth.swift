import Crypto
import Foundation
import LookoutWire

/// Hex digests used by Nightscout auth (§1.1, §1.2).
enum NSHash {
    static func hex<D: Sequence>(_ d: D) -> String where D.Element == UInt8 {
        d.map { String(format: "%02x", $0) }.joined()
    }
    static func sha1(_ s: String) -> String { hex(Insecure.SHA1.hash(data: Data(s.utf8))) }
    static func sha512(_ s: String) -> String { hex(SHA512.hash(data: Data(s.utf8))) }
}

/// Shiro-style permission matching (`:`-separated parts, `*` wildcard, `,` alternatives).
enum NSPermission {
    /// True when the granted permission `granted` implies `required`.
    static func implies(_ granted: String, _ required: String) -> Bool {
        let g = granted.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let r = required.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        for (idx, part) in g.enumerated() {
            if idx >= r.count {
                if part != "*" { return false }
                continue
            }
            if part == "*" { continue }
            let alternatives = part.split(separator: ",").map(String.init)
            if !alternatives.contains(r[idx]) { return false }
        }
        return true  // a shorter granted permission implies everything below it
    }

    /// True when any of `granted` implies `required`.
    static func permitted(_ granted: [String], _ required: String) -> Bool {
        granted.contains { implies($0, required) }
    }
}

/// A Nightscout subject (§1.2): a named holder of roles with a derived access token.
public struct NightscoutSubject: Sendable, Hashable {
    /// Display name, e.g. `"Loop Caregiver"`.
    public var name: String
    /// Role names, e.g. `["readable"]`.
    public var roles: [String]
    /// The Mongo-style 24-hex `_id` the token is derived from.
    public var id: String
    /// Admin Tools' notes, if any.
    public var notes: String?
    /// When it was created (ISO), if known.
    public var createdAt: String?
    /// Creates a subject; `id` defaults to a random 24-hex value.
    public init(name: String, roles: [String], id: String? = nil, notes: String? = nil, createdAt: String? = nil) {
        self.name = name
        self.roles = roles
        self.id = id ?? NSObjectId.make()
        self.notes = notes
        self.createdAt = createdAt
    }
}

/// Generates Mongo-ObjectId-shaped 24-hex ids.
enum NSObjectId {
    static func make() -> String {
        (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
    static func isValid(_ s: String) -> Bool {
        s.utf8.count == 24 && s.allSatisfy { $0.isHexDigit }
    }
}

/// The outcome of resolving a request's credentials.
struct NSAuthResult: Sendable {
    /// Effective permissions (including default roles; none when credentials were refused).
    var permissions: [String]
    /// Permission groups, one per role (for the JWT exchange answer).
    var groups: [[String]]
    /// Subject name when a subject resolved.
    var subject: String?
    /// True when the API secret matched.
    var isSecret: Bool
    /// True when no credentials were sent at all.
    var noCredentials: Bool
    /// True when credentials were sent and rejected.
    var failed: Bool
}

/// Credentials extracted from a request (§1.1–§1.4).
struct NSCredentials: Sendable {
    var apiSecretHeader: String?
    var secretQuery: String?
    var tokenQuery: String?
    var bearer: String?
    var bodySecret: String?
    var bodyToken: String?
    var isEmpty: Bool {
        apiSecretHeader == nil && secretQuery == nil && tokenQuery == nil && bearer == nil
            && bodySecret == nil && bodyToken == nil
    }
}

/// Errors from JWT verification.
enum NSJWTError: Error { case malformed, badSignature, expired }

/// Issues and verifies the HS256 JWTs of §1.3.
struct NSJWT: Sendable {
    let keyBytes: Data
    var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    static func b64url(_ d: Data) -> String {
        d.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
    static func unb64url(_ s: Substring) -> Data? {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t)
    }

    func sign(accessToken: String, iat: Int64, exp: Int64) -> String {
        let header = NSJWT.b64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload: JSONValue = ["accessToken": .string(accessToken), "iat": .int(iat), "exp": .int(exp)]
        let body = NSJWT.b64url(payload.jsonData)
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(body)".utf8), using: key)
        return "\(header).\(body).\(NSJWT.b64url(Data(mac)))"
    }

    /// Returns the payload's access token when the signature is valid and `exp` lies after `nowSec`.
    func verify(_ token: String, nowSec: Int64) throws(NSJWTError) -> (accessToken: String, iat: Int64, exp: Int64) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let sig = NSJWT.unb64url(parts[2]), let payloadData = NSJWT.unb64url(parts[1])
        else { throw .malformed }
        guard HMAC<SHA256>.isValidAuthenticationCode(sig, authenticating: Data("\(parts[0]).\(parts[1])".utf8), using: key)
        else { throw .badSignature }
        guard let payload = try? JSONValue.parse(payloadData), let at = payload["accessToken"]?.stringValue,
            let exp = payload["exp"]?.int64Value
        else { throw .malformed }
        guard exp > nowSec else { throw .expired }
        return (at, payload["iat"]?.int64Value ?? 0, exp)
    }
}

/// Holds subjects, roles, the JWT key and the failed-login delay list (§1.2–§1.5).
actor NightscoutAuth {
    /// Built-in roles of §1.2.
    static let builtInRoles: [String: [String]] = [
        "admin": ["*"], "denied": [], "status-only": ["api:status:read"], "readable": ["*:*:read"],
        "careportal": ["api:treatments:create"], "devicestatus-upload": ["api:devicestatus:create"],
        "activity": ["api:activity:create"],
    ]

    let apiSecret: String?
    let secretSHA1: String?
    let secretSHA512: String?
    /// Effective roles: name → permissions (built-in, then `Options.roles`, then stored roles).
    var roles: [String: [String]]
    /// Roles given in the options (shown by `GET /roles` like built-in ones, without `_id`).
    let optionRoles: [String: [String]]
    /// Roles created through `/api/v2/authorization/roles`.
    var roleDocs: [NSRoleDoc] = []
    let defaultRoles: [String]
    var subjects: [NightscoutSubject]
    let jwt: NSJWT
    let jwtLifetime: TimeInterval
    let failDelayMs: Int64
    /// Accumulated delay per client address (ms).
    var delays: [String: Int64] = [:]
    /// Number of failed credential checks, for the admin notification the spec mentions.
    var failedAttempts = 0

    init(options: NightscoutSimulator.Options) {
        apiSecret = options.apiSecret
        secretSHA1 = options.apiSecret.map(NSHash.sha1)
        secretSHA512 = options.apiSecret.map(NSHash.sha512)
        var r = NightscoutAuth.builtInRoles
        for (k, v) in options.roles { r[k] = v }
        roles = r
        optionRoles = options.roles
        defaultRoles = options.defaultRoles
        subjects = options.subjects
        jwt = NSJWT(keyBytes: Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        jwtLifetime = options.jwtLifetime
        failDelayMs = Int64(options.authFailDelay.components.seconds * 1000)
            + Int64(options.authFailDelay.components.attoseconds / 1_000_000_000_000_000)
    }

    // MARK: subjects

    func addSubject(_ s: NightscoutSubject) -> String {
        subjects.removeAll { $0.name == s.name }
        subjects.append(s)
        return accessToken(for: s)
    }

    func accessToken(for s: NightscoutSubject) -> String {
        // `name.toLowerCase().replace(/[\W]/g, '').substring(0, 10)`: \W is ASCII-only.
        let abbrev = String(s.name.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) || $0 == "_" }.prefix(10))
        let digest = NSHash.sha1((secretSHA1 ?? "") + s.id)
        return abbrev + "-" + digest.prefix(16)
    }

    func accessToken(named name: String) -> String? {
        subjects.first { $0.name == name }.map(accessToken(for:))
    }

    /// §1.2 lookup quirk: the last `-` segment (≥16 chars) is a prefix of the digest; also the
    /// SHA-1 of the full token matches.
    func findSubject(_ token: String) -> NightscoutSubject? {
        let last = token.split(separator: "-", omittingEmptySubsequences: false).last.map(String.init) ?? token
        for s in subjects {
            let full = accessToken(for: s)
            let digest = NSHash.sha1((secretSHA1 ?? "") + s.id)
            if last.count >= 16, digest.hasPrefix(last.lowercased()) { return s }
            if NSHash.sha1(full) == token.lowercased() { return s }
        }
        return nil
    }

    func permissionGroups(forRoles rs: [String]) -> [[String]] { rs.map { roles[$0] ?? [] } }

    var defaultGroups: [[String]] { permissionGroups(forRoles: defaultRoles) }

    func result(for s: NightscoutSubject) -> NSAuthResult {
        let groups = permissionGroups(forRoles: s.roles) + defaultGroups
        return NSAuthResult(
            permissions: groups.flatMap { $0 }, groups: groups, subject: s.name, isSecret: false,
            noCredentials: false, failed: false)
    }

    // MARK: delays

    /// The delay (ms) the next auth resolution from `client` waits.
    func pendingDelay(for client: String) -> Int64 { delays[client] ?? 0 }

    private func waitDelay(_ client: String) async {
        let d = delays[client] ?? 0
        if d > 0 { try? await Task.sleep(for: .milliseconds(d)) }
    }

    private func record(success: Bool, client: String) {
        if success {
            delays[client] = nil
        } else {
            failedAttempts += 1
            delays[client, default: 0] += failDelayMs
        }
    }

    // MARK: v1 resolution

    /// Resolves v1/v2 credentials as `lib/authorization/index.js` (`resolveWithRequest`,
    /// `resolve`) does. One secret is looked at (`?secret=`, else `api-secret`, else the body's
    /// `secret`; the string `null` counts as none) and one token (a `Bearer` header, else
    /// `?token=` or the body's `token`, which count only when they name a subject: an unknown one
    /// is as if none was sent). No credential at all gets the default roles; a credential that
    /// does not resolve (a plain or wrong secret, an unknown token in `api-secret`, a bad or
    /// expired JWT) gets no permissions at all ("All validation failed"), not the defaults.
    func resolveV1(_ c: NSCredentials, client: String, nowSec: Int64) async -> NSAuthResult {
        var secret = c.secretQuery ?? c.apiSecretHeader ?? c.bodySecret
        if secret == "" || secret == "null" { secret = nil }
        var token: String? = nil
        if let b = c.bearer, !b.isEmpty {
            token = b
        } else if let t = c.tokenQuery ?? c.bodyToken, !t.isEmpty {
            // `authorize`: a JWT or an access token that names a subject, else nothing.
            let named = (try? jwt.verify(t, nowSec: nowSec)).map { $0.accessToken } ?? t
            if findSubject(named) != nil { token = t }
        }
        guard secret != nil || token != nil else {
            return NSAuthResult(
                permissions: defaultGroups.flatMap { $0 }, groups: defaultGroups, subject: nil, isSecret: false,
                noCredentials: true, failed: false)
        }
        await waitDelay(client)
        if let secret, let s1 = secretSHA1, secret.lowercased() == s1 || secret == secretSHA512 {
            record(success: true, client: client)
            return NSAuthResult(
                permissions: ["*"], groups: [["*"]], subject: nil, isSecret: true, noCredentials: false, failed: false)
        }
        var accessToken = token.flatMap { try? jwt.verify($0, nowSec: nowSec) }.map { $0.accessToken }
        if accessToken == nil, let t = token, c.bearer == nil { accessToken = t }
        if accessToken == nil, let secret, findSubject(secret) != nil { accessToken = secret }
        if let at = accessToken, let s = findSubject(at) {
            record(success: true, client: client)
            return result(for: s)
        }
        record(success: false, client: client)
        return NSAuthResult(permissions: [], groups: [], subject: nil, isSecret: false, noCredentials: false, failed: true)
    }

    // MARK: JWT exchange

    /// `GET /api/v2/authorization/request/{token}`: nil when the token is unknown.
    func exchange(_ token: String, client: String, nowSec: Int64) async -> JSONValue? {
        await waitDelay(client)
        var subject = findSubject(token)
        if subject == nil, let v = try? jwt.verify(token, nowSec: nowSec) { subject = findSubject(v.accessToken) }
        guard let s = subject else {
            record(success: false, client: client)
            return nil
        }
        record(success: true, client: client)
        let exp = nowSec + Int64(jwtLifetime)
        let groups = permissionGroups(forRoles: s.roles) + defaultGroups
        return [
            "token": .string(jwt.sign(accessToken: accessToken(for: s), iat: nowSec, exp: exp)),
            "sub": .string(s.name),
            "permissionGroups": .array(groups.map { .array($0.map(JSONValue.string)) }),
            "iat": .int(nowSec), "exp": .int(exp),
        ]
    }

    // MARK: v3 resolution

    enum V3Outcome: Sendable { case ok(NSAuthResult), missing, bad }

    /// Resolves the v3 `Authorization` header (§1.4): Bearer JWT only.
    func resolveV3(authorization: String?, client: String, nowSec: Int64) async -> V3Outcome {
        guard let h = authorization else { return .missing }
        let parts = h.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else { return .missing }
        await waitDelay(client)
        guard let v = try? jwt.verify(String(parts[1]), nowSec: nowSec), let s = findSubject(v.accessToken) else {
            record(success: false, client: client)
            return .bad
        }
        record(success: true, client: client)
        return .ok(result(for: s))
    }
}
