import Crypto
import Foundation

/// The TOTP codes Loop validates for remote bolus/carbs (§5.2): RFC 6238, HMAC-SHA1, 6 digits,
/// 30-second period. Nightscout never sees the secret; this helper lets tests and scenarios act
/// as a caregiver app (the simulator only forwards `otp`).
public enum LoopOTP {
    /// Decodes RFC 4648 Base32 (`A–Z2–7`, padding and case ignored); nil on bad input.
    public static func base32Decode(_ s: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0, value = 0
        var out: [UInt8] = []
        for ch in s.uppercased() where ch != "=" {
            guard let idx = alphabet.firstIndex(of: ch) else { return nil }
            value = (value << 5) | idx
            bits += 5
            if bits >= 8 {
                out.append(UInt8((value >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return out
    }

    /// The 6-digit code for `date` (period 30 s) from a Base32 secret; nil for a bad secret.
    public static func code(base32Secret: String, at date: Date) -> String? {
        guard let key = base32Decode(base32Secret) else { return nil }
        return code(key: key, counter: UInt64(max(0, date.timeIntervalSince1970) / 30))
    }

    /// The code for a raw key and time-step counter.
    public static func code(key: [UInt8], counter: UInt64) -> String {
        let msg = withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: msg, using: SymmetricKey(data: key)))
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let bin = (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        return String(format: "%06d", bin % 1_000_000)
    }
}
