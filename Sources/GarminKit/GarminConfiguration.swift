import Foundation

/// Which SSO flow `login` uses.
public enum GarminSSOFlow: String, Sendable, CaseIterable {
    /// The mobile JSON flow only (garth 0.8).
    case mobile
    /// The classic widget form flow only (garth ≤ 0.6.3).
    case widget
    /// The mobile flow, then the widget flow when the mobile endpoints are unavailable (HTTP 403,
    /// 404, 405, 429 or 5xx, or a `CAPTCHA_REQUIRED` status). Never after a wrong password or MFA code.
    case mobileThenWidget
}

/// Everything a ``GarminClient`` needs to know: domain, transport overrides, timeouts, retries.
public struct GarminConfiguration: Sendable {
    /// The Garmin domain: `garmin.com` or `garmin.cn`.
    public var domain: String
    /// SSO base URL override (default `https://sso.{domain}`).
    public var ssoBaseURL: URL?
    /// Connect API base URL override (default `https://connectapi.{domain}`).
    public var connectAPIBaseURL: URL?
    /// Where the OAuth consumer key and secret come from (default garth's S3 file).
    public var oauthConsumerURL: URL
    /// A consumer given directly (skips `oauthConsumerURL`).
    public var consumer: OAuthConsumer?
    /// Timeout of every request, in seconds.
    public var timeout: TimeInterval
    /// Retries of idempotent API requests on 408/500/502/503/504 and transport failures.
    public var retries: Int
    /// Backoff factor: waits between attempts are 0, 2·f, 4·f … seconds (garth: 0.5 → 0 s, 1 s, 2 s).
    public var backoffFactor: Double
    /// `User-Agent` of Connect API requests.
    public var apiUserAgent: String
    /// Refresh the OAuth2 token this many seconds before it expires (garth: 0).
    public var refreshBuffer: TimeInterval
    /// Token directory (garth format); nil keeps tokens in memory only.
    public var tokenDirectory: URL?
    /// The SSO flow of `login`.
    public var ssoFlow: GarminSSOFlow

    /// Creates a configuration. Throws ``GarminError/invalidConfiguration(_:)`` for an unknown
    /// domain or a non-HTTPS override that is not loopback.
    public init(
        domain: String = "garmin.com", ssoBaseURL: URL? = nil, connectAPIBaseURL: URL? = nil,
        oauthConsumerURL: URL = URL(string: "https://thegarth.s3.amazonaws.com/oauth_consumer.json")!,
        consumer: OAuthConsumer? = nil, timeout: TimeInterval = 10, retries: Int = 3, backoffFactor: Double = 0.5,
        apiUserAgent: String = GarminKit.apiUserAgent, refreshBuffer: TimeInterval = 0, tokenDirectory: URL? = nil,
        ssoFlow: GarminSSOFlow = .mobileThenWidget
    ) throws {
        guard ["garmin.com", "garmin.cn"].contains(domain) else {
            throw GarminError.invalidConfiguration("domain must be garmin.com or garmin.cn, not \(domain.prefix(40))")
        }
        for (name, url) in [("ssoBaseURL", ssoBaseURL), ("connectAPIBaseURL", connectAPIBaseURL), ("oauthConsumerURL", oauthConsumerURL)] {
            if let url { try Self.checkTransport(url, name: name) }
        }
        self.domain = domain
        self.ssoBaseURL = ssoBaseURL
        self.connectAPIBaseURL = connectAPIBaseURL
        self.oauthConsumerURL = oauthConsumerURL
        self.consumer = consumer
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoffFactor = max(0, backoffFactor)
        self.apiUserAgent = apiUserAgent
        self.refreshBuffer = max(0, refreshBuffer)
        self.tokenDirectory = tokenDirectory
        self.ssoFlow = ssoFlow
    }

    /// Configuration for a simulator (or any server) answering every host at `baseURL`.
    public static func local(
        _ baseURL: URL, domain: String = "garmin.com", tokenDirectory: URL? = nil, refreshBuffer: TimeInterval = 0,
        backoffFactor: Double = 0.01, ssoFlow: GarminSSOFlow = .mobileThenWidget
    ) throws -> GarminConfiguration {
        try GarminConfiguration(
            domain: domain, ssoBaseURL: baseURL, connectAPIBaseURL: baseURL,
            oauthConsumerURL: baseURL.appendingPathComponent("oauth_consumer.json"), backoffFactor: backoffFactor,
            refreshBuffer: refreshBuffer, tokenDirectory: tokenDirectory, ssoFlow: ssoFlow)
    }

    /// The effective SSO base URL.
    public var sso: URL { ssoBaseURL ?? URL(string: "https://sso.\(domain)")! }
    /// The effective Connect API base URL.
    public var connectAPI: URL { connectAPIBaseURL ?? URL(string: "https://connectapi.\(domain)")! }

    /// HTTPS is required except for loopback hosts (127.0.0.1, ::1, localhost).
    static func checkTransport(_ url: URL, name: String) throws {
        let scheme = url.scheme?.lowercased()
        let host = url.host?.lowercased() ?? ""
        let loopback = host == "127.0.0.1" || host == "::1" || host == "[::1]" || host == "localhost"
        if scheme == "https" || (scheme == "http" && loopback) { return }
        throw GarminError.invalidConfiguration("\(name) must be https (http only for loopback): \(url.scheme ?? "?")://\(host)")
    }
}
