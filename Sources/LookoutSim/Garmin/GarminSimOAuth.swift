import Crypto
import Foundation

/// The preauthorized and exchange endpoints (§6, §8), verifying OAuth1 HMAC-SHA1 signatures
/// (RFC 5849) with the simulator's own consumer secret.
enum GarminSimOAuth {
    static func preauthorized(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        guard req.header("user-agent") == "com.garmin.android.apps.connectmobile" else { return .text(400, "OAuth User-Agent expected") }
        guard let auth = verify(req, form: [], sim: sim, tokenSecret: nil) else { return .text(401, "Invalid signature") }
        guard auth["oauth_token"] == nil else { return .text(400, "preauthorized is signed without a token") }
        guard req.queryValue("accepts-mfa-tokens") == "true", let ticket = req.queryValue("ticket"),
            let loginURL = req.queryValue("login-url")
        else { return .text(400, "ticket, login-url and accepts-mfa-tokens=true required") }
        guard let redeemed = await sim.state.redeem(ticket) else { return .text(401, "Invalid ticket") }
        let (email, mobile) = redeemed
        let d = sim.options.domain
        let want = mobile ? "https://mobile.integration.\(d)/gcm/android" : "https://sso.\(d)/sso/embed"
        guard loginURL == want else { return .text(400, "login-url must be \(want)") }
        let (token, rec) = await sim.state.issueOAuth1(email: email, mobile: mobile)
        var pairs = [("oauth_token", token), ("oauth_token_secret", rec.secret)]
        if let mfa = rec.mfaToken {
            let exp = Date(timeIntervalSince1970: sim.options.clock().timeIntervalSince1970 + 365 * 86400)
            pairs += [("mfa_token", mfa), ("mfa_expiration_timestamp", serverTimestamp(exp))]
        }
        return .text(200, pairs.map { "\(enc($0.0))=\(enc($0.1))" }.joined(separator: "&"))
    }

    static func exchange(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        guard req.header("user-agent") == "com.garmin.android.apps.connectmobile" else { return .text(400, "OAuth User-Agent expected") }
        let bodyText = String(decoding: req.body, as: UTF8.self)
        if !req.body.isEmpty, req.header("content-type")?.hasPrefix("application/x-www-form-urlencoded") != true {
            return .text(400, "form body expected")
        }
        let form = bodyText.isEmpty ? [] : SimRequest.parseQuery(bodyText)
        guard let token = oauthParams(req)?["oauth_token"], let rec = await sim.state.oauth1Record(token) else {
            return .text(401, "Unknown OAuth1 token")
        }
        guard verify(req, form: form, sim: sim, tokenSecret: rec.secret) != nil else { return .text(401, "Invalid signature") }
        let f = Dictionary(form, uniquingKeysWith: { a, _ in a })
        let hasAudience = f["audience"] != nil
        if hasAudience != rec.awaitingLoginExchange || (hasAudience && f["audience"] != "GARMIN_CONNECT_MOBILE_ANDROID_DI") {
            return .json(403, ["message": "Client app validation failed"])
        }
        if f["mfa_token"] != rec.mfaToken { return .text(401, "mfa_token mismatch") }
        await sim.state.markExchanged(token)
        let now = sim.options.clock()
        let (access, refresh, jti) = await sim.state.issueAccess(email: rec.email, now: now)
        return .json(
            200,
            [
                "scope": "CONNECT_READ CONNECT_WRITE COMMUNITY_COURSE_READ", "jti": .string(jti), "access_token": .string(access),
                "token_type": "bearer", "refresh_token": .string(refresh), "expires_in": .int(Int64(sim.options.accessTokenLifetime)),
                "refresh_token_expires_in": 2_591_999,
            ])
    }

    /// Parses `Authorization: OAuth k="v", …` (values percent-decoded).
    static func oauthParams(_ req: SimRequest) -> [String: String]? {
        guard let h = req.header("authorization"), h.hasPrefix("OAuth ") else { return nil }
        var out: [String: String] = [:]
        for part in h.dropFirst(6).split(separator: ",") {
            let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { return nil }
            let v = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            out[String(kv[0])] = v.removingPercentEncoding ?? v
        }
        return out
    }

    /// Recomputes the signature from the request as received; returns the OAuth parameters when
    /// it matches (constant-time compare), nil otherwise.
    static func verify(_ req: SimRequest, form: [(String, String)], sim: GarminSimulator, tokenSecret: String?) -> [String: String]? {
        guard let p = oauthParams(req), p["oauth_consumer_key"] == sim.options.consumerKey,
            p["oauth_signature_method"] == "HMAC-SHA1", p["oauth_version"] == "1.0", let nonce = p["oauth_nonce"], !nonce.isEmpty,
            let ts = p["oauth_timestamp"], Int(ts) != nil, let sig = p["oauth_signature"]
        else { return nil }
        if (tokenSecret == nil) != (p["oauth_token"] == nil) { return nil }
        var params = req.query + form
        for (k, v) in p where k != "oauth_signature" { params.append((k, v)) }
        let encoded: [(String, String)] = params.map { (enc($0.0), enc($0.1)) }
        let sorted = encoded.sorted { (a: (String, String), b: (String, String)) -> Bool in
            a.0 == b.0 ? a.1 < b.1 : a.0 < b.0
        }
        let norm = sorted.map { (kv: (String, String)) -> String in kv.0 + "=" + kv.1 }.joined(separator: "&")
        let host = (req.header("host") ?? "127.0.0.1").lowercased()
        let uri = "http://\(host.hasSuffix(":80") ? String(host.dropLast(3)) : host)\(req.path)"
        let base = "\(req.method)&\(enc(uri))&\(enc(norm))"
        let key = SymmetricKey(data: Data((enc(sim.options.consumerSecret) + "&" + enc(tokenSecret ?? "")).utf8))
        let expected = Data(HMAC<Insecure.SHA1>.authenticationCode(for: Data(base.utf8), using: key)).base64EncodedString()
        let a: [UInt8] = Array(expected.utf8), b: [UInt8] = Array(sig.utf8)
        guard a.count == b.count else { return nil }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        guard diff == 0 else { return nil }
        return p
    }

    /// RFC 3986 encoding (unreserved kept).
    static func enc(_ s: String) -> String {
        var allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        allowed.remove(charactersIn: "")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }

    /// Garmin's `YYYY-MM-DD HH:MM:SS.fff` (UTC).
    static func serverTimestamp(_ d: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        return f.string(from: d)
    }
}
