import Crypto
import Foundation

/// A time-based one-time password generator (RFC 6238), as Loop uses for remote bolus and carbs
/// (spec §5.2: HMAC-SHA1, 6 digits, 30 s; other algorithms, 8 digits and other periods are
/// honoured when the `otpauth://` URL asks for them).
///
/// The secret never leaves the value: `description`, `debugDescription`, reflection and every
/// `TOTPError` omit it.
///
/// ```swift
/// let totp = try TOTP(url: "otpauth://totp/1714557600000?algorithm=SHA1&digits=6&issuer=Loop&period=30&secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
/// totp.code(at: Date(timeIntervalSince1970: 59))   // "287082"
/// ```
public struct TOTP: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The HMAC hash function.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable {
        /// HMAC-SHA1 (Loop's choice and the RFC 6238 default).
        case sha1 = "SHA1"
        /// HMAC-SHA256.
        case sha256 = "SHA256"
        /// HMAC-SHA512.
        case sha512 = "SHA512"
    }

    /// The hash function.
    public let algorithm: Algorithm
    /// Number of digits of a code (6 or 8).
    public let digits: Int
    /// Length of a time step in seconds.
    public let period: Int
    /// The URL's `issuer` parameter (`Loop`), if any.
    public let issuer: String?
    /// The URL's label (Loop: the secret's creation time in epoch ms), if any.
    public let label: String?
    /// The shared secret (raw bytes). Private so it cannot be printed by accident.
    private let key: [UInt8]

    /// Creates a generator from raw secret bytes.
    /// - Throws: `TOTPError.invalidSecret` for an empty key, `.invalidDigits` unless `digits` is
    ///   6 or 8, `.invalidPeriod` unless `period` > 0.
    public init(secret: [UInt8], algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30,
                issuer: String? = nil, label: String? = nil) throws {
        guard !secret.isEmpty else { throw TOTPError.invalidSecret("the secret is empty") }
        guard digits == 6 || digits == 8 else { throw TOTPError.invalidDigits(String(digits)) }
        guard period > 0 else { throw TOTPError.invalidPeriod(String(period)) }
        self.key = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
        self.issuer = issuer
        self.label = label
    }

    /// Creates a generator from a Base32 secret (RFC 4648; case-insensitive, padding optional,
    /// spaces and hyphens ignored).
    /// - Throws: `TOTPError.invalidSecret` (without echoing the secret) and the errors of
    ///   `init(secret:algorithm:digits:period:issuer:label:)`.
    public init(base32Secret: String, algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30,
                issuer: String? = nil, label: String? = nil) throws {
        try self.init(secret: try TOTP.base32Decode(base32Secret), algorithm: algorithm, digits: digits,
                      period: period, issuer: issuer, label: label)
    }

    /// Parses an `otpauth://totp/<label>?secret=<BASE32>&algorithm=SHA1|SHA256|SHA512&digits=6|8&period=30`
    /// URL (what Loop shows as a QR code or text). Missing `algorithm`, `digits` and `period`
    /// take the Key URI defaults SHA1, 6 and 30; parameter names and the algorithm are matched
    /// case-insensitively.
    /// - Throws: `TOTPError` naming what is wrong; never containing the secret.
    public init(url text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme else {
            throw TOTPError.invalidURL("not a URL")
        }
        guard scheme.lowercased() == "otpauth" else { throw TOTPError.invalidURL("scheme is \"\(scheme)\", expected \"otpauth\"") }
        let type = (components.host ?? "").lowercased()
        guard type == "totp" else {
            throw TOTPError.invalidURL(type.isEmpty ? "missing OTP type, expected otpauth://totp/"
                                                    : "OTP type is \"\(type)\", only \"totp\" is supported")
        }
        var params: [String: String] = [:]
        for item in components.queryItems ?? [] {
            let name = item.name.lowercased()
            guard params[name] == nil else { throw TOTPError.invalidURL("parameter \"\(name)\" appears more than once") }
            params[name] = item.value ?? ""
        }
        guard let secret = params["secret"], !secret.isEmpty else { throw TOTPError.missingSecret }
        var algorithm = Algorithm.sha1
        if let a = params["algorithm"] {
            guard let found = Algorithm.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(a) == .orderedSame }) else {
                throw TOTPError.unsupportedAlgorithm(a)
            }
            algorithm = found
        }
        var digits = 6
        if let d = params["digits"] {
            guard let n = Int(d), n == 6 || n == 8 else { throw TOTPError.invalidDigits(d) }
            digits = n
        }
        var period = 30
        if let p = params["period"] {
            guard let n = Int(p), n > 0 else { throw TOTPError.invalidPeriod(p) }
            period = n
        }
        var label = components.path
        if label.hasPrefix("/") { label.removeFirst() }
        try self.init(base32Secret: secret, algorithm: algorithm, digits: digits, period: period,
                      issuer: params["issuer"].flatMap { $0.isEmpty ? nil : $0 }, label: label.isEmpty ? nil : label)
    }

    /// Parses an `otpauth://totp/…` URL (see `init(url:)` taking a string).
    public init(url: URL) throws { try self.init(url: url.absoluteString) }

    /// The time step counter for `date`: `floor(unixTime / period)` (0 before 1970).
    public func counter(at date: Date) -> UInt64 {
        let t = date.timeIntervalSince1970
        guard t > 0 else { return 0 }
        return UInt64((t / Double(period)).rounded(.down))
    }

    /// The code for `date`, zero-padded to `digits`.
    public func code(at date: Date) -> String { code(counter: counter(at: date)) }

    /// The code for a time step counter (RFC 4226 HOTP with dynamic truncation).
    public func code(counter: UInt64) -> String {
        let message = withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        let symmetric = SymmetricKey(data: key)
        let mac: [UInt8]
        switch algorithm {
        case .sha1: mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: symmetric))
        case .sha256: mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: symmetric))
        case .sha512: mac = Array(HMAC<SHA512>.authenticationCode(for: message, using: symmetric))
        }
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary = (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let modulus: UInt32 = digits == 8 ? 100_000_000 : 1_000_000
        let text = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// Seconds until the code for `date` changes.
    public func secondsRemaining(at date: Date) -> TimeInterval {
        let p = Double(period)
        let t = max(0, date.timeIntervalSince1970)
        return p - t.truncatingRemainder(dividingBy: p)
    }

    /// Decodes RFC 4648 Base32 (`A–Z`, `2–7`): case-insensitive, `=` padding optional, spaces and
    /// hyphens ignored. Trailing bits that do not fill a byte are dropped.
    /// - Throws: `TOTPError.invalidSecret` naming the position of a bad character (not the
    ///   character itself, which is part of the secret), or for an input without any data.
    public static func base32Decode(_ text: String) throws -> [UInt8] {
        var bits = 0, value = 0
        var out: [UInt8] = []
        var paddingStarted = false
        for (i, scalar) in text.unicodeScalars.enumerated() {
            let v = scalar.value
            let index: Int
            switch v {
            case 0x20, 0x2D: continue  // space, hyphen
            case 0x3D: paddingStarted = true; continue  // "="
            case 0x41...0x5A: index = Int(v - 0x41)  // A–Z
            case 0x61...0x7A: index = Int(v - 0x61)  // a–z
            case 0x32...0x37: index = Int(v - 0x32) + 26  // 2–7
            default:
                throw TOTPError.invalidSecret("character at position \(i + 1) is not in the Base32 alphabet (A–Z, 2–7)")
            }
            if paddingStarted { throw TOTPError.invalidSecret("data after \"=\" padding at position \(i + 1)") }
            value = ((value << 5) | index) & 0xFFFF
            bits += 5
            if bits >= 8 {
                out.append(UInt8((value >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        guard !out.isEmpty else { throw TOTPError.invalidSecret("the secret decodes to no bytes") }
        return out
    }

    /// `TOTP(SHA1, 6 digits, 30 s, issuer Loop)`; never the secret.
    public var description: String {
        "TOTP(\(algorithm.rawValue), \(digits) digits, \(period) s" + (issuer.map { ", issuer \($0)" } ?? "") + ")"
    }

    /// Same as `description` (no secret).
    public var debugDescription: String { description }

    /// A mirror without the secret, so `dump` stays redacted.
    public var customMirror: Mirror {
        Mirror(self, children: ["algorithm": algorithm, "digits": digits, "period": period, "issuer": issuer as Any,
                                "label": label as Any, "secret": "<redacted>"])
    }
}

/// Why a TOTP secret or `otpauth://` URL was refused. No case carries the secret.
public enum TOTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not an `otpauth://totp/…` URL; the reason says what is wrong.
    case invalidURL(String)
    /// The URL has no `secret` parameter (or it is empty).
    case missingSecret
    /// The secret is not valid Base32 or is empty; the reason names the position, not the text.
    case invalidSecret(String)
    /// The `algorithm` parameter is not SHA1, SHA256 or SHA512 (the value given).
    case unsupportedAlgorithm(String)
    /// The `digits` parameter is not 6 or 8 (the value given).
    case invalidDigits(String)
    /// The `period` parameter is not a positive integer (the value given).
    case invalidPeriod(String)

    /// A human-readable summary.
    public var description: String {
        switch self {
        case .invalidURL(let m): return "OTP URL: \(m)"
        case .missingSecret: return "OTP URL: the secret parameter is missing or empty"
        case .invalidSecret(let m): return "OTP secret is invalid: \(m)"
        case .unsupportedAlgorithm(let a): return "OTP URL: unsupported algorithm \"\(a)\" (expected SHA1, SHA256 or SHA512)"
        case .invalidDigits(let d): return "OTP URL: digits must be 6 or 8, not \"\(d)\""
        case .invalidPeriod(let p): return "OTP URL: period must be a positive number of seconds, not \"\(p)\""
        }
    }
}
