import Foundation

/// Obtains and caches the JWT for an access token (spec §1.3–§1.5).
///
/// * The JWT comes from `GET /api/v2/authorization/request/{accessToken}` through an injected
///   `fetch` function (the transport is the caller's).
/// * It is reused until `refreshMargin` (default 5 min) before its `exp` (read from the JWT
///   payload without verification).
/// * Concurrent callers share one in-flight exchange.
/// * `withToken` retries an operation once with a fresh JWT when it fails with 401 (e.g. the
///   server's signing key changed after a redeploy).
/// * A failed exchange (401: unknown token) blocks new attempts for `failureDelay` × the number
///   of consecutive failures (the server adds 5 s per failure from an address), so bad credentials
///   are not hammered; callers get `NightscoutError.authenticationBackoff` meanwhile.
public actor JWTCache: CustomStringConvertible, CustomReflectable {
    /// Performs a GET of the given path (relative to the site, starting with `/`).
    public typealias Fetch = @Sendable (_ path: String) async throws -> NightscoutHTTPResponse

    private let accessToken: String
    private let fetch: Fetch
    private let refreshMargin: TimeInterval
    private let failureDelay: TimeInterval
    private let maximumFailureDelay: TimeInterval
    private let now: @Sendable () -> Date

    private var current: (token: String, expiresAt: Date)?
    private var inFlight: Task<(token: String, expiresAt: Date), any Error>?
    private var consecutiveFailures = 0
    private var blockedUntil: Date?

    /// Number of exchanges performed so far (for diagnostics and tests).
    public private(set) var exchangeCount = 0

    /// Creates a cache for `accessToken`.
    /// - Parameters:
    ///   - refreshMargin: refresh when less than this remains before `exp` (default 300 s).
    ///   - failureDelay: wait after each consecutive failed exchange (default 5 s, the server's
    ///     `authFailDelay`); the total grows with each failure up to `maximumFailureDelay`.
    ///   - now: the clock.
    ///   - fetch: performs the HTTP GET.
    public init(accessToken: String, refreshMargin: TimeInterval = 300, failureDelay: TimeInterval = 5,
                maximumFailureDelay: TimeInterval = 600, now: @escaping @Sendable () -> Date = { Date() },
                fetch: @escaping Fetch) {
        self.accessToken = accessToken
        self.refreshMargin = refreshMargin
        self.failureDelay = failureDelay
        self.maximumFailureDelay = maximumFailureDelay
        self.now = now
        self.fetch = fetch
    }

    /// Never shows the access token or JWT.
    public nonisolated var description: String { "JWTCache(<redacted>)" }

    /// A mirror without the access token or JWT, so `dump` stays redacted.
    public nonisolated var customMirror: Mirror { Mirror(self, children: ["cache": description]) }

    /// The path of the exchange request for `accessToken` (percent-encoded).
    public static func exchangePath(for accessToken: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = accessToken.addingPercentEncoding(withAllowedCharacters: allowed) ?? accessToken
        return "/api/v2/authorization/request/" + encoded
    }

    /// A valid JWT: the cached one, or a freshly exchanged one.
    public func token() async throws -> String {
        if let c = current, now() < c.expiresAt.addingTimeInterval(-refreshMargin) { return c.token }
        return try await refresh()
    }

    /// The cached JWT's expiry, if one is cached.
    public var expiresAt: Date? { current?.expiresAt }

    /// Forgets `token` if it is the cached one (call after the server rejected it).
    public func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }

    /// Forgets any cached JWT.
    public func invalidateAll() { current = nil }

    /// Runs `operation` with a JWT; if it fails with 401, exchanges again once and retries.
    public func withToken<T: Sendable>(_ operation: @Sendable (String) async throws -> T) async throws -> T {
        let first = try await token()
        do {
            return try await operation(first)
        } catch where JWTCache.isUnauthorized(error) {
            invalidate(first)
            let second = try await token()
            return try await operation(second)
        }
    }

    /// Whether `error` means 401 Unauthorized.
    public static func isUnauthorized(_ error: any Error) -> Bool {
        switch error as? NightscoutError {
        case .unauthorized?: return true
        case .http(let status, _)?: return status == 401
        default: return false
        }
    }

    private func refresh() async throws -> String {
        if let task = inFlight { return try await task.value.token }
        if let until = blockedUntil {
            let remaining = until.timeIntervalSince(now())
            if remaining > 0 { throw NightscoutError.authenticationBackoff(retryAfter: remaining) }
        }
        let fetch = self.fetch
        let path = JWTCache.exchangePath(for: accessToken)
        let clock = self.now
        exchangeCount += 1
        let task = Task { try await JWTCache.exchange(path: path, fetch: fetch, now: clock) }
        inFlight = task
        do {
            let result = try await task.value
            inFlight = nil
            current = result
            consecutiveFailures = 0
            blockedUntil = nil
            return result.token
        } catch {
            inFlight = nil
            if JWTCache.isUnauthorized(error) {
                consecutiveFailures += 1
                let delay = min(maximumFailureDelay, failureDelay * Double(consecutiveFailures))
                blockedUntil = now().addingTimeInterval(delay)
            }
            throw error
        }
    }

    private static func exchange(path: String, fetch: Fetch, now: @Sendable () -> Date) async throws
        -> (token: String, expiresAt: Date)
    {
        let response = try await fetch(path)
        switch response.status {
        case 200:
            guard let grant = try? JSONDecoder().decode(JWTGrant.self, from: response.body) else {
                throw NightscoutError.decoding("authorization response is not a JWT grant")
            }
            // Without an `exp`, assume the server's 8 h lifetime.
            return (grant.token, grant.expiresAt ?? now().addingTimeInterval(8 * 3600))
        case 401:
            throw NightscoutError.unauthorized(message: response.errorMessage ?? "Unauthorized")
        default:
            throw NightscoutError.http(status: response.status, body: response.bodyText())
        }
    }
}
