import Foundation
import Logging

/// The state of the stored tokens, without any token value.
public struct GarminTokenStatus: Sendable, Equatable {
    /// An OAuth1 token is present.
    public var loggedIn: Bool
    /// The account uses MFA (the OAuth1 token carries an `mfa_token`).
    public var mfa: Bool
    /// The domain the OAuth1 token was issued for.
    public var domain: String?
    /// When the OAuth2 token expires (nil: no OAuth2 token).
    public var oauth2ExpiresAt: Date?
    /// Whether the OAuth2 token has expired (or is within the refresh buffer).
    public var needsRefresh: Bool
    /// When the MFA token expires, if known.
    public var mfaExpiresAt: Date?
    /// The token directory, if any.
    public var directory: URL?
}

/// A Garmin Connect client (an actor): login, tokens with automatic refresh (concurrent callers
/// share one exchange), and the Connect API with garth's retry rules.
///
/// ```swift
/// let client = try GarminClient(configuration: .init(tokenDirectory: dir))
/// _ = try await client.login(email: e, password: p, mfa: { readCode() })
/// let hr = try await client.heartRate(date: "2026-11-20")
/// ```
public actor GarminClient {
    /// The configuration (the domain follows loaded tokens).
    public private(set) var configuration: GarminConfiguration
    let transport: GarminTransport
    let logger: Logger
    let now: @Sendable () -> Date
    private var oauth1: OAuth1Token?
    private var oauth2: OAuth2Token?
    private var refreshTask: Task<OAuth2Token, any Error>?

    /// Creates a client and loads the tokens in `configuration.tokenDirectory` if present.
    public init(
        configuration: GarminConfiguration, transport: GarminTransport = .asyncHTTPClient(),
        logger: Logger = Logger(label: "GarminKit"), now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        self.now = now
        if let dir = configuration.tokenDirectory {
            let tokens = try GarminTokenStore.load(from: dir)
            oauth1 = tokens.oauth1
            oauth2 = tokens.oauth2
            if let d = tokens.oauth1?.domain, ["garmin.com", "garmin.cn"].contains(d) { self.configuration.domain = d }
        }
    }

    /// A client following garth's environment: `GARTH_HOME` is the token directory (loaded now,
    /// saved on login and refresh), `GARTH_TOKEN` a `dumps()` string loaded into memory; both set
    /// is an error. Without either, `configuration.tokenDirectory` is used as given.
    public static func fromEnvironment(
        _ configuration: GarminConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment,
        transport: GarminTransport = .asyncHTTPClient(), logger: Logger = Logger(label: "GarminKit")
    ) async throws -> GarminClient {
        let (dir, tokens) = try GarminTokenStore.fromEnvironment(environment)
        var configuration = configuration
        if let dir { configuration.tokenDirectory = dir }
        let client = try GarminClient(configuration: configuration, transport: transport, logger: logger)
        if dir == nil, let tokens { try await client.setTokens(tokens) }
        return client
    }

    var oauth: GarminOAuth { GarminOAuth(configuration: configuration, transport: transport, now: now, logger: logger) }
    var sso: GarminSSO { GarminSSO(configuration: configuration, transport: transport, oauth: oauth, logger: logger) }

    // MARK: tokens

    /// The current tokens (handle with care: they are secrets).
    public var tokens: GarminTokens { GarminTokens(oauth1: oauth1, oauth2: oauth2) }

    /// Replaces the tokens (e.g. from `GarminTokenStore.loads`) and saves them to the directory.
    public func setTokens(_ tokens: GarminTokens) throws {
        oauth1 = tokens.oauth1
        oauth2 = tokens.oauth2
        if let d = tokens.oauth1?.domain, ["garmin.com", "garmin.cn"].contains(d) { configuration.domain = d }
        if let dir = configuration.tokenDirectory { try GarminTokenStore.dump(tokens, to: dir) }
    }

    /// Token status without token values.
    public func status() -> GarminTokenStatus {
        GarminTokenStatus(
            loggedIn: oauth1 != nil, mfa: oauth1?.mfaToken != nil, domain: oauth1?.domain,
            oauth2ExpiresAt: oauth2?.expiresAtDate, needsRefresh: oauth2.map(needsRefresh) ?? true,
            mfaExpiresAt: oauth1?.mfaExpirationTimestamp, directory: configuration.tokenDirectory)
    }

    /// Forgets both tokens and removes the token files.
    public func logout() throws {
        refreshTask?.cancel()
        refreshTask = nil
        oauth1 = nil
        oauth2 = nil
        if let dir = configuration.tokenDirectory { try GarminTokenStore.remove(from: dir) }
        logger.info("garmin: logged out")
    }

    // MARK: login

    /// Logs in. With an MFA handler the code is asked for when needed; without one, an MFA
    /// account returns `.needsMFA` for ``resumeLogin(_:code:)``. Tokens are saved on success.
    public func login(email: String, password: String, mfa: GarminMFAHandler? = nil) async throws -> GarminLoginResult {
        let result = try await sso.login(email: email, password: password, mfa: mfa)
        if case .success(let o1, let o2) = result { try store(o1, o2) }
        return result
    }

    /// Completes a login that returned `.needsMFA` with the code; saves the tokens.
    @discardableResult
    public func resumeLogin(_ state: GarminMFAState, code: String) async throws -> (OAuth1Token, OAuth2Token) {
        let (o1, o2) = try await sso.resume(state, code: code)
        try store(o1, o2)
        return (o1, o2)
    }

    private func store(_ o1: OAuth1Token, _ o2: OAuth2Token) throws {
        refreshTask = nil
        oauth1 = o1
        oauth2 = o2
        if let dir = configuration.tokenDirectory { try GarminTokenStore.dump(tokens, to: dir) }
        logger.info("garmin: logged in", metadata: ["mfa": "\(o1.mfaToken != nil)", "expires_at": "\(o2.expiresAt)"])
    }

    // MARK: refresh

    func needsRefresh(_ token: OAuth2Token) -> Bool {
        Double(token.expiresAt) - configuration.refreshBuffer < now().timeIntervalSince1970
    }

    /// A valid OAuth2 token: the current one, or a fresh exchange when it is missing or expires
    /// within the refresh buffer. Concurrent callers share one exchange.
    public func validOAuth2Token() async throws -> OAuth2Token {
        guard oauth1 != nil else { throw GarminError.notAuthenticated }
        if let t = oauth2, !needsRefresh(t) { return t }
        return try await refresh()
    }

    /// Exchanges the OAuth1 token for a new OAuth2 token now (joining an exchange in flight) and
    /// saves `oauth2_token.json`. A 401 is ``GarminError/oauth1Invalid``; the OAuth1 token is kept.
    @discardableResult
    public func refresh() async throws -> OAuth2Token {
        if let t = refreshTask { return try await t.value }
        guard let o1 = oauth1 else { throw GarminError.notAuthenticated }
        let oauth = self.oauth
        let task = Task { try await oauth.exchange(o1, audience: false) }
        refreshTask = task
        defer { refreshTask = nil }
        let token = try await task.value
        if oauth1 == o1 {
            oauth2 = token
            if let dir = configuration.tokenDirectory { try GarminTokenStore.writeOAuth2(token, to: dir) }
        }
        return token
    }
}
