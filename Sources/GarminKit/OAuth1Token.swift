import Foundation

/// The long-lived OAuth1 token from the preauthorized call (garth `OAuth1Token`; spec §6, §10).
/// JSON keys are garth's; `description` masks the secrets.
public struct OAuth1Token: Sendable, Equatable, Codable, CustomStringConvertible {
    /// `oauth_token`.
    public var oauthToken: String
    /// `oauth_token_secret` (never logged).
    public var oauthTokenSecret: String
    /// `mfa_token`, present for MFA accounts; sent on every exchange.
    public var mfaToken: String?
    /// `mfa_expiration_timestamp` (naive UTC).
    public var mfaExpirationTimestamp: Date?
    /// `domain` the token was issued for.
    public var domain: String?

    /// Creates a token.
    public init(
        oauthToken: String, oauthTokenSecret: String, mfaToken: String? = nil, mfaExpirationTimestamp: Date? = nil,
        domain: String? = nil
    ) {
        self.oauthToken = oauthToken
        self.oauthTokenSecret = oauthTokenSecret
        self.mfaToken = mfaToken
        self.mfaExpirationTimestamp = mfaExpirationTimestamp
        self.domain = domain
    }

    enum CodingKeys: String, CodingKey {
        case oauthToken = "oauth_token"
        case oauthTokenSecret = "oauth_token_secret"
        case mfaToken = "mfa_token"
        case mfaExpirationTimestamp = "mfa_expiration_timestamp"
        case domain
    }

    /// Decodes garth's JSON (timestamps in any of the §10 read formats; unknown keys ignored).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        oauthToken = try c.decode(String.self, forKey: .oauthToken)
        oauthTokenSecret = try c.decode(String.self, forKey: .oauthTokenSecret)
        mfaToken = try c.decodeIfPresent(String.self, forKey: .mfaToken)
        domain = try c.decodeIfPresent(String.self, forKey: .domain)
        if try c.decodeNil(forKey: .mfaExpirationTimestamp) {
            mfaExpirationTimestamp = nil
        } else if let n = try? c.decode(Double.self, forKey: .mfaExpirationTimestamp) {
            mfaExpirationTimestamp = Date(timeIntervalSince1970: n)
        } else {
            let s = try c.decode(String.self, forKey: .mfaExpirationTimestamp)
            guard let d = GarminTimestamp.parse(s) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .mfaExpirationTimestamp, in: c, debugDescription: "unreadable mfa_expiration_timestamp")
            }
            mfaExpirationTimestamp = d
        }
    }

    /// Encodes with garth's keys (the timestamp as Python `isoformat()`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(oauthToken, forKey: .oauthToken)
        try c.encode(oauthTokenSecret, forKey: .oauthTokenSecret)
        try c.encode(mfaToken, forKey: .mfaToken)
        try c.encode(mfaExpirationTimestamp.map(GarminTimestamp.isoformat), forKey: .mfaExpirationTimestamp)
        try c.encode(domain, forKey: .domain)
    }

    /// The fields in garth's order, for the file writer.
    var pythonPairs: [(String, PythonJSONWriter.Scalar)] {
        func opt(_ s: String?) -> PythonJSONWriter.Scalar { s.map { .string($0) } ?? .null }
        return [
            ("oauth_token", .string(oauthToken)), ("oauth_token_secret", .string(oauthTokenSecret)),
            ("mfa_token", opt(mfaToken)), ("mfa_expiration_timestamp", opt(mfaExpirationTimestamp.map(GarminTimestamp.isoformat))),
            ("domain", opt(domain)),
        ]
    }

    /// Masks the token and secrets.
    public var description: String {
        "OAuth1Token(oauth_token: ***, oauth_token_secret: ***, mfa_token: \(mfaToken == nil ? "nil" : "***"), domain: \(domain ?? "nil"))"
    }
}

/// Date parsing and formatting for garth's token files.
public enum GarminTimestamp {
    /// Python `datetime.isoformat()` of a naive UTC time: `YYYY-MM-DDTHH:MM:SS[.ffffff]`.
    public static func isoformat(_ date: Date) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        let t = date.timeIntervalSince1970
        let seconds = t.rounded(.down)
        var micros = Int(((t - seconds) * 1_000_000).rounded())
        var whole = Date(timeIntervalSince1970: seconds)
        if micros >= 1_000_000 { micros -= 1_000_000; whole += 1 }
        let c = cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        let base = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
            c.second ?? 0)
        return micros == 0 ? base : base + String(format: ".%06d", micros)
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.fff]`, `YYYY-MM-DDTHH:MM:SS[.f+]` with an optional `Z` or
    /// `±HH:MM` offset (naive times are UTC), or epoch seconds as text.
    public static func parse(_ text: String) -> Date? {
        let s = text.trimmingCharacters(in: .whitespaces)
        if let n = Double(s) { return Date(timeIntervalSince1970: n) }
        let pattern = #"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$"#
        guard let re = try? NSRegularExpression(pattern: pattern),
            let m = re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s))
        else { return nil }
        func group(_ i: Int) -> String? {
            guard let r = Range(m.range(at: i), in: s) else { return nil }
            return String(s[r])
        }
        var comps = DateComponents()
        comps.year = Int(group(1)!); comps.month = Int(group(2)!); comps.day = Int(group(3)!)
        comps.hour = Int(group(4)!); comps.minute = Int(group(5)!); comps.second = Int(group(6)!)
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        guard var date = cal.date(from: comps) else { return nil }
        if let frac = group(7) { date += Double("0." + frac) ?? 0 }
        if let zone = group(8), zone != "Z" {
            let digits = zone.dropFirst().replacingOccurrences(of: ":", with: "")
            let h = Int(digits.prefix(2)) ?? 0, mm = Int(digits.suffix(2)) ?? 0
            let offset = TimeInterval((h * 60 + mm) * 60)
            date -= zone.hasPrefix("-") ? -offset : offset
        }
        return date
    }
}
