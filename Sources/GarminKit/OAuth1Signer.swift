import Crypto
import Foundation

/// OAuth 1.0a HMAC-SHA1 signing as requests-oauthlib 2.0 / oauthlib do it (RFC 5849; spec §7).
/// Pure: nonce and timestamp are inputs, so the spec's worked vectors can be checked.
public enum OAuth1Signer {
    /// An OAuth1 token key and secret (for signing).
    public struct Token: Sendable, Equatable {
        /// `oauth_token`.
        public var key: String
        /// `oauth_token_secret`.
        public var secret: String
        /// Creates a signing token.
        public init(key: String, secret: String) { self.key = key; self.secret = secret }
    }

    /// The signed parameters of one request.
    public struct Signed: Sendable, Equatable {
        /// The signature base string.
        public var baseString: String
        /// The normalized parameter string.
        public var normalizedParameters: String
        /// Base64 HMAC-SHA1 signature.
        public var signature: String
        /// The `Authorization` header value (`OAuth oauth_nonce="…", …`).
        public var authorizationHeader: String
    }

    /// RFC 3986 percent-encoding: only `A-Z a-z 0-9 - . _ ~` stay, uppercase hex.
    public static func percentEncode(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += String(format: "%%%02X", b)
            }
        }
        return out
    }

    /// Base URI (§7.4): lowercase scheme and host, port only when not the default, path; no query.
    public static func baseURI(_ url: URL) -> String {
        let scheme = (url.scheme ?? "https").lowercased()
        let host = (url.host ?? "").lowercased()
        var s = "\(scheme)://\(host)"
        if let port = url.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            s += ":\(port)"
        }
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        return s + (path.isEmpty ? "/" : path)
    }

    /// Query parameters of `url`, percent-decoded, in order.
    public static func queryParameters(_ url: URL) -> [(String, String)] {
        guard let q = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery, !q.isEmpty else {
            return []
        }
        return decodeForm(q)
    }

    /// Decodes `a=b&c=d` (percent-decoding, `+` as space).
    public static func decodeForm(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { item in
            let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func dec(_ s: Substring) -> String {
                String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
            }
            return (dec(kv[0]), kv.count > 1 ? dec(kv[1]) : "")
        }
    }

    /// Encodes pairs as `application/x-www-form-urlencoded` (RFC 3986 escaping), in order.
    public static func encodeForm(_ pairs: [(String, String)]) -> String {
        pairs.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }

    /// Signs a request. `url` carries the query; `formParameters` are the decoded body parameters
    /// of a form-encoded body (empty otherwise).
    public static func sign(
        method: String, url: URL, formParameters: [(String, String)] = [], consumer: OAuthConsumer, token: Token?,
        nonce: String, timestamp: Int
    ) -> Signed {
        var oauth: [(String, String)] = [
            ("oauth_nonce", nonce), ("oauth_timestamp", String(timestamp)), ("oauth_version", "1.0"),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_consumer_key", consumer.key),
        ]
        if let token { oauth.append(("oauth_token", token.key)) }
        let all = (queryParameters(url) + formParameters + oauth).map { (percentEncode($0.0), percentEncode($0.1)) }
        let sorted = all.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        let normalized = sorted.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let base = method.uppercased() + "&" + percentEncode(baseURI(url)) + "&" + percentEncode(normalized)
        let key = percentEncode(consumer.secret) + "&" + percentEncode(token?.secret ?? "")
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(base.utf8), using: SymmetricKey(data: Data(key.utf8)))
        let signature = Data(mac).base64EncodedString()
        let header = "OAuth " + (oauth + [("oauth_signature", signature)])
            .map { "\($0.0)=\"\(percentEncode($0.1))\"" }.joined(separator: ", ")
        return Signed(baseString: base, normalizedParameters: normalized, signature: signature, authorizationHeader: header)
    }

    /// A random nonce: 30 decimal digits (oauthlib sends 20–30).
    public static func makeNonce() -> String {
        var s = ""
        for _ in 0..<30 { s += String(Int.random(in: 0...9)) }
        return s
    }
}
