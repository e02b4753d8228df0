import Foundation
import Logging
import LookoutWire

/// The OAuth1 side of Garmin auth: the consumer, the preauthorized call (§6) and the OAuth1 →
/// OAuth2 exchange (§8). Stateless apart from the process-wide consumer cache.
struct GarminOAuth: Sendable {
    let configuration: GarminConfiguration
    let transport: GarminTransport
    let now: @Sendable () -> Date
    let logger: Logger

    /// Consumers fetched from `oauthConsumerURL`, once per process and URL.
    private static let cache = ConsumerCache()

    /// The consumer: the injected one, else the cached or freshly fetched `oauth_consumer.json`.
    func consumer() async throws -> OAuthConsumer {
        if let c = configuration.consumer { return c }
        let url = configuration.oauthConsumerURL
        return try await Self.cache.consumer(for: url) {
            let response = try await transport.send(GarminHTTPRequest(method: "GET", url: url), configuration.timeout)
            try GarminHTTPCheck.ok(response, url: url)
            do { return try JSONDecoder().decode(OAuthConsumer.self, from: response.body) } catch {
                throw GarminError.decoding("oauth_consumer.json: consumer_key and consumer_secret strings expected")
            }
        }
    }

    /// `GET /oauth-service/oauth/preauthorized?ticket=…&login-url=…&accepts-mfa-tokens=true`.
    func preauthorize(ticket: String, loginURL: String, cookies: GarminCookieJar?) async throws -> OAuth1Token {
        let consumer = try await consumer()
        let url = GarminURL.make(
            configuration.connectAPI, "/oauth-service/oauth/preauthorized",
            [("ticket", ticket), ("login-url", loginURL), ("accepts-mfa-tokens", "true")])
        let signed = OAuth1Signer.sign(
            method: "GET", url: url, consumer: consumer, token: nil, nonce: OAuth1Signer.makeNonce(),
            timestamp: Int(now().timeIntervalSince1970))
        var headers = [("User-Agent", GarminKit.oauthUserAgent), ("Authorization", signed.authorizationHeader)]
        if let cookie = await cookies?.header() { headers.append(("Cookie", cookie)) }
        let response = try await transport.send(GarminHTTPRequest(method: "GET", url: url, headers: headers), configuration.timeout)
        try GarminHTTPCheck.ok(response, url: url)
        var fields: [String: String] = [:]
        for (k, v) in OAuth1Signer.decodeForm(response.text.trimmingCharacters(in: .whitespacesAndNewlines)) where fields[k] == nil {
            fields[k] = v
        }
        guard let token = fields["oauth_token"], let secret = fields["oauth_token_secret"], !token.isEmpty, !secret.isEmpty else {
            throw GarminError.decoding("preauthorized response: oauth_token and oauth_token_secret expected")
        }
        var expiry: Date?
        if let e = fields["mfa_expiration_timestamp"], !e.isEmpty {
            guard let d = GarminTimestamp.parse(e) else { throw GarminError.decoding("preauthorized response: unreadable mfa_expiration_timestamp") }
            expiry = d
        }
        logger.debug("garmin: OAuth1 token issued", metadata: ["mfa": "\(fields["mfa_token"] != nil)"])
        return OAuth1Token(
            oauthToken: token, oauthTokenSecret: secret, mfaToken: fields["mfa_token"], mfaExpirationTimestamp: expiry,
            domain: configuration.domain)
    }

    /// `POST /oauth-service/oauth/exchange/user/2.0`; `audience` only for the mobile-flow login.
    /// A 401 becomes ``GarminError/oauth1Invalid``.
    func exchange(_ oauth1: OAuth1Token, audience: Bool) async throws -> OAuth2Token {
        let consumer = try await consumer()
        let url = GarminURL.make(configuration.connectAPI, "/oauth-service/oauth/exchange/user/2.0", [])
        var form: [(String, String)] = []
        if audience { form.append(("audience", GarminKit.loginAudience)) }
        if let mfa = oauth1.mfaToken { form.append(("mfa_token", mfa)) }
        let signed = OAuth1Signer.sign(
            method: "POST", url: url, formParameters: form, consumer: consumer,
            token: .init(key: oauth1.oauthToken, secret: oauth1.oauthTokenSecret), nonce: OAuth1Signer.makeNonce(),
            timestamp: Int(now().timeIntervalSince1970))
        let headers = [
            ("User-Agent", GarminKit.oauthUserAgent), ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", signed.authorizationHeader),
        ]
        let body = Data(OAuth1Signer.encodeForm(form).utf8)
        let response = try await transport.send(
            GarminHTTPRequest(method: "POST", url: url, headers: headers, body: body), configuration.timeout)
        if response.status == 401 { throw GarminError.oauth1Invalid }
        try GarminHTTPCheck.ok(response, url: url,
                               secrets: [oauth1.oauthToken, oauth1.oauthTokenSecret, oauth1.mfaToken, consumer.secret].compactMap { $0 })
        let token = try OAuth2Token.fromExchange(try GarminResponseJSON.parse(response.body), now: now())
        logger.debug("garmin: OAuth2 token exchanged", metadata: ["expires_at": "\(token.expiresAt)", "login": "\(audience)"])
        return token
    }
}

/// Caches one consumer per URL; concurrent first callers share one fetch.
actor ConsumerCache {
    private var done: [URL: OAuthConsumer] = [:]
    private var pending: [URL: Task<OAuthConsumer, any Error>] = [:]

    func consumer(for url: URL, fetch: @escaping @Sendable () async throws -> OAuthConsumer) async throws -> OAuthConsumer {
        if let c = done[url] { return c }
        if let t = pending[url] { return try await t.value }
        let t = Task { try await fetch() }
        pending[url] = t
        defer { pending[url] = nil }
        let c = try await t.value
        done[url] = c
        return c
    }
}

/// URL building and status checks shared by the SSO, OAuth and API code.
enum GarminURL {
    /// `base` + `path` + `?` + RFC 3986-encoded query (in order).
    static func make(_ base: URL, _ path: String, _ query: [(String, String)]) -> URL {
        var s = base.absoluteString
        while s.hasSuffix("/") { s.removeLast() }
        s += path.hasPrefix("/") ? path : "/" + path
        if !query.isEmpty { s += "?" + OAuth1Signer.encodeForm(query) }
        return URL(string: s) ?? base
    }
}

/// Turns non-success responses into typed errors.
enum GarminHTTPCheck {
    /// Throws unless the status is 2xx: 429 → rateLimited, else http (redacted body, URL without query).
    static func ok(_ response: GarminHTTPResponse, url: URL, secrets: [String] = []) throws {
        if (200..<300).contains(response.status) { return }
        throw error(response, url: url, secrets: secrets)
    }

    /// The typed error for a non-success response. The body loses the secret keys' values
    /// (``GarminRedaction``) and every one of `secrets` (the tokens the request carried), so a
    /// server that echoes them gets them into no error.
    static func error(_ response: GarminHTTPResponse, url: URL, secrets: [String] = []) -> GarminError {
        if response.status == 429 { return .rateLimited(retryAfter: response.retryAfter) }
        let body = GarminRedaction.redact(Redaction.text(response.text, secrets: secrets))
        return .http(status: response.status, body: body, url: GarminRedaction.url(url))
    }
}
