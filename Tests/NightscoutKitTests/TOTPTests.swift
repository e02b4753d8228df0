import Foundation
import LookoutTestSupport
import XCTest
@testable import NightscoutKit

/// `TOTP`: RFC 6238 vectors (spec §5.2 and RFC 6238 Appendix B), Base32, `otpauth://` parsing
/// and its errors (never echoing the secret), and a cross-check against Python's `pyotp` in a
/// throwaway venv (skipped with the reason when python3/pip is unavailable).
final class TOTPTests: XCTestCase {
    static let rfcBase32 = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let seed20 = Array("12345678901234567890".utf8)
    static let seed32 = Array("12345678901234567890123456789012".utf8)
    static let seed64 = Array("1234567890123456789012345678901234567890123456789012345678901234".utf8)

    func testSpecVectorsSHA1SixDigits() throws {
        let totp = try TOTP(base32Secret: Self.rfcBase32)
        let vectors: [(TimeInterval, String)] = [(59, "287082"), (1_111_111_109, "081804"), (1_234_567_890, "005924"),
                                                 (2_000_000_000, "279037")]
        for (t, code) in vectors { XCTAssertEqual(totp.code(at: Date(timeIntervalSince1970: t)), code, "T=\(t)") }
        XCTAssertEqual(try TOTP.base32Decode(Self.rfcBase32), Self.seed20)
    }

    func testRFC6238AppendixBEightDigits() throws {
        let sha1 = try TOTP(secret: Self.seed20, algorithm: .sha1, digits: 8)
        let sha256 = try TOTP(secret: Self.seed32, algorithm: .sha256, digits: 8)
        let sha512 = try TOTP(secret: Self.seed64, algorithm: .sha512, digits: 8)
        let table: [(TimeInterval, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for (t, c1, c256, c512) in table {
            let d = Date(timeIntervalSince1970: t)
            XCTAssertEqual(sha1.code(at: d), c1, "SHA1 T=\(t)")
            XCTAssertEqual(sha256.code(at: d), c256, "SHA256 T=\(t)")
            XCTAssertEqual(sha512.code(at: d), c512, "SHA512 T=\(t)")
        }
    }

    func testBase32CaseInsensitivePaddingOptional() throws {
        XCTAssertEqual(try TOTP.base32Decode("MZXW6YTBOI======"), Array("foobar".utf8))
        XCTAssertEqual(try TOTP.base32Decode("mzxw6ytboi"), Array("foobar".utf8))
        XCTAssertEqual(try TOTP.base32Decode("MZXW 6YTB-OI"), Array("foobar".utf8))
        XCTAssertEqual(try TOTP.base32Decode("MY"), Array("f".utf8))
        XCTAssertThrowsError(try TOTP.base32Decode("MZXW1YTB")) { error in
            XCTAssertEqual(error as? TOTPError, .invalidSecret("character at position 5 is not in the Base32 alphabet (A–Z, 2–7)"))
        }
        XCTAssertThrowsError(try TOTP.base32Decode("MY==MY"))
        XCTAssertThrowsError(try TOTP.base32Decode("===="))
    }

    func testLoopURLParsesAndHonoursParameters() throws {
        let url = "otpauth://totp/1714557600000?algorithm=SHA1&digits=6&issuer=Loop&period=30&secret=\(Self.rfcBase32)"
        let totp = try TOTP(url: url)
        XCTAssertEqual(totp.algorithm, .sha1)
        XCTAssertEqual(totp.digits, 6)
        XCTAssertEqual(totp.period, 30)
        XCTAssertEqual(totp.issuer, "Loop")
        XCTAssertEqual(totp.label, "1714557600000")
        XCTAssertEqual(totp.code(at: Date(timeIntervalSince1970: 59)), "287082")
        XCTAssertEqual(try TOTP(url: URL(string: url)!), totp)

        // Lowercase secret, defaults when parameters are absent.
        let minimal = try TOTP(url: "otpauth://totp/x?secret=\(Self.rfcBase32.lowercased())")
        XCTAssertEqual(minimal.code(at: Date(timeIntervalSince1970: 1_111_111_109)), "081804")
        XCTAssertEqual(minimal.algorithm, .sha1)

        // 8 digits, SHA256, period 60: the code for T is the RFC code for counter T/60.
        let seed32 = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA"
        XCTAssertEqual(try TOTP.base32Decode(seed32), Self.seed32)
        let custom = try TOTP(url: "otpauth://totp/Loop:me?secret=\(seed32)&algorithm=sha256&digits=8&period=60")
        XCTAssertEqual(custom.algorithm, .sha256)
        XCTAssertEqual(custom.period, 60)
        let reference = try TOTP(secret: Self.seed32, algorithm: .sha256, digits: 8)
        XCTAssertEqual(custom.code(at: Date(timeIntervalSince1970: 118)), reference.code(counter: 1))
        XCTAssertEqual(custom.code(at: Date(timeIntervalSince1970: 2 * 1_111_111_109)), "68084774")
        XCTAssertEqual(custom.secondsRemaining(at: Date(timeIntervalSince1970: 130)), 50)
    }

    func testURLErrorsNameTheProblemNeverTheSecret() {
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PX1"
        let cases: [(String, TOTPError)] = [
            ("not a url at all", .invalidURL("not a URL")),
            ("https://example.com/?secret=\(Self.rfcBase32)", .invalidURL("scheme is \"https\", expected \"otpauth\"")),
            ("otpauth://hotp/x?secret=\(Self.rfcBase32)&counter=1", .invalidURL("OTP type is \"hotp\", only \"totp\" is supported")),
            ("otpauth://totp/x?digits=6", .missingSecret),
            ("otpauth://totp/x?secret=", .missingSecret),
            ("otpauth://totp/x?secret=\(secret)", .invalidSecret("character at position 32 is not in the Base32 alphabet (A–Z, 2–7)")),
            ("otpauth://totp/x?secret=\(Self.rfcBase32)&algorithm=MD5", .unsupportedAlgorithm("MD5")),
            ("otpauth://totp/x?secret=\(Self.rfcBase32)&digits=7", .invalidDigits("7")),
            ("otpauth://totp/x?secret=\(Self.rfcBase32)&digits=six", .invalidDigits("six")),
            ("otpauth://totp/x?secret=\(Self.rfcBase32)&period=0", .invalidPeriod("0")),
            ("otpauth://totp/x?secret=\(Self.rfcBase32)&period=-30", .invalidPeriod("-30")),
            ("otpauth://totp/x?secret=\(Self.rfcBase32)&secret=\(Self.rfcBase32)", .invalidURL("parameter \"secret\" appears more than once")),
        ]
        for (url, expected) in cases {
            XCTAssertThrowsError(try TOTP(url: url), url) { error in
                XCTAssertEqual(error as? TOTPError, expected, url)
                let text = "\(error)"
                XCTAssertFalse(text.contains(secret) || text.contains(Self.rfcBase32), "error echoes the secret: \(text)")
                XCTAssertFalse(text.isEmpty)
            }
        }
    }

    func testDescriptionAndDumpHideTheSecret() throws {
        let totp = try TOTP(url: "otpauth://totp/1714557600000?algorithm=SHA1&digits=6&issuer=Loop&period=30&secret=\(Self.rfcBase32)")
        XCTAssertEqual(totp.description, "TOTP(SHA1, 6 digits, 30 s, issuer Loop)")
        var dumped = ""
        dump(totp, to: &dumped)
        for text in [totp.description, totp.debugDescription, "\(totp)", String(reflecting: totp), dumped] {
            XCTAssertFalse(text.contains(Self.rfcBase32), text)
            XCTAssertFalse(text.contains("12345678901234567890"), text)
            XCTAssertFalse(text.contains("49, 50, 51"), text)
        }
    }

    func testInvalidConstructorArguments() {
        XCTAssertThrowsError(try TOTP(secret: [])) { XCTAssertEqual($0 as? TOTPError, .invalidSecret("the secret is empty")) }
        XCTAssertThrowsError(try TOTP(secret: Self.seed20, digits: 7)) { XCTAssertEqual($0 as? TOTPError, .invalidDigits("7")) }
        XCTAssertThrowsError(try TOTP(secret: Self.seed20, period: 0)) { XCTAssertEqual($0 as? TOTPError, .invalidPeriod("0")) }
    }

    // MARK: - pyotp cross-check

    static let pyotp = PythonVenv(label: "pyotp cross-check", packages: ["pyotp"])

    override class func tearDown() {
        pyotp.removeWorkDirectory()
        super.tearDown()
    }

    /// 50 random times × SHA1/SHA256/SHA512 × 6/8 digits (random secrets of 20/32/64 bytes,
    /// periods 30 and 60) computed by `TOTP` and by `pyotp.parse_uri(url).at(t)`.
    func testMatchesPyotp() async throws {
        let (python, workDir) = try Self.pyotp.pythonOrSkip()
        var rng = SplitMix64(seed: 0x5EED_1234)
        struct Case: Encodable { var url: String; var times: [Int64]; var codes: [String] }
        var cases: [Case] = []
        for algorithm in TOTP.Algorithm.allCases {
            for digits in [6, 8] {
                let length = algorithm == .sha1 ? 20 : algorithm == .sha256 ? 32 : 64
                let secret = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                let base32 = Self.base32Encode(secret)
                let period = digits == 8 && algorithm == .sha256 ? 60 : 30
                let url = "otpauth://totp/Lookout:test?secret=\(base32)&algorithm=\(algorithm.rawValue)&digits=\(digits)&period=\(period)&issuer=Lookout"
                let totp = try TOTP(url: url)
                XCTAssertEqual(totp.algorithm, algorithm)
                let times = (0..<50).map { _ in Int64(rng.next() % 4_102_444_800) }
                cases.append(Case(url: url, times: times, codes: times.map { totp.code(at: Date(timeIntervalSince1970: Double($0))) }))
            }
        }
        let input = workDir.appendingPathComponent("totp-cases.json")
        try JSONEncoder().encode(cases).write(to: input)
        let script = workDir.appendingPathComponent("totp_check.py")
        try Data(Self.pyotpScript.utf8).write(to: script)
        let result = try await PythonVenv.runOffPool(python, [script.path, input.path], timeout: 60, threadName: "pyotp")
        XCTAssertTrue(result.succeeded, result.summary)
        struct Report: Decodable { var checked: Int; var mismatches: [String] }
        let report = try JSONDecoder().decode(Report.self, from: result.stdout)
        XCTAssertEqual(report.checked, 3 * 2 * 50)
        XCTAssertEqual(report.mismatches, [], "pyotp disagrees")
    }

    static let pyotpScript = #"""
import json, sys
import pyotp
cases = json.load(open(sys.argv[1]))
checked, mismatches = 0, []
for c in cases:
    totp = pyotp.parse_uri(c["url"])
    for t, code in zip(c["times"], c["codes"]):
        theirs = totp.at(t)
        checked += 1
        if theirs != code:
            mismatches.append("%s digits=%d t=%d ours=%s pyotp=%s" % (totp.digest().name, totp.digits, t, code, theirs))
print(json.dumps({"checked": checked, "mismatches": mismatches}))
"""#

    static func base32Encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var out = "", buffer = 0, bits = 0
        for b in bytes {
            buffer = (buffer << 8) | Int(b); bits += 8
            while bits >= 5 { out.append(alphabet[(buffer >> (bits - 5)) & 31]); bits -= 5 }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }
}

/// A small deterministic random generator for reproducible cases.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
