import Foundation
import Hummingbird
import Logging

/// A local Garmin SSO + Connect API server (contract: shared/specs/garmin.md §16) for tests and
/// `lookout sim garmin`. One HTTP listener on 127.0.0.1 serves every host (SSO, connectapi, the
/// OAuth consumer file). Shares no code with GarminKit.
///
/// What it does:
/// - Flow A (§3): sign-in page with `SESSION`/`__cflb` cookies, JSON login (401
///   `INVALID_USERNAME_PASSWORD`), `MFA_REQUIRED` + `/mobile/api/mfa/verifyCode`, LB pin page;
///   exact `clientId`/`locale`/`service` query and body key/type checks.
/// - Flow B (§5): embed and sign-in pages with `_csrf`, form login (401 wrong password), 302 to the
///   MFA page, MFA form (wrong code: the MFA page again), success page with `embed?ticket=ST-…"`.
/// - `GET /oauth_consumer.json`; preauthorized and exchange endpoints verifying the OAuth1
///   HMAC-SHA1 signature with the simulator's own consumer secret (401 on a bad signature or
///   unknown token), one-shot tickets, `login-url` per flow, `audience` only on a mobile login's
///   first exchange (403 "Client app validation failed" otherwise), `mfa_token` echo checks.
/// - OAuth2 access tokens expire after `Options.accessTokenLifetime`; stale bearers get 401.
/// - Connect endpoints of §12 with deterministic generated data (no data after the clock's date).
/// - Fault injection: 429 with `Retry-After` or any status for the next N requests under a path
///   prefix; counters of logins, MFA verifications, exchanges and API calls.
public final class GarminSimulator: Sendable {
    /// Configuration.
    public struct Options: Sendable {
        /// TCP port on 127.0.0.1; 0 picks a free one.
        public var port: Int
        /// The domain identifiers are checked against (`garmin.com` or `garmin.cn`).
        public var domain: String
        /// The simulator's OAuth consumer key.
        public var consumerKey: String
        /// The simulator's OAuth consumer secret.
        public var consumerSecret: String
        /// Accounts: email → password.
        public var users: [String: String]
        /// Accounts that need MFA (email) and the code they accept.
        public var mfaUsers: Set<String>
        /// The MFA code every MFA account accepts.
        public var mfaCode: String
        /// `expires_in` of issued OAuth2 tokens, seconds.
        public var accessTokenLifetime: Int
        /// Whether the mobile JSON login is served (false: 404, to exercise the widget fallback).
        public var mobileLoginEnabled: Bool
        /// Injected clock.
        public var clock: @Sendable () -> Date

        /// The default account.
        public static let defaultEmail = "runner@example.com"
        /// The default password (simulated account only).
        public static let defaultPassword = "correct horse battery"
        /// The MFA account.
        public static let mfaEmail = "mfa@example.com"

        /// Creates options.
        public init(
            port: Int = 0, domain: String = "garmin.com", consumerKey: String = "sim-consumer-key",
            consumerSecret: String = "sim-consumer-secret",
            users: [String: String] = [Options.defaultEmail: Options.defaultPassword, Options.mfaEmail: Options.defaultPassword],
            mfaUsers: Set<String> = [Options.mfaEmail], mfaCode: String = "123456", accessTokenLifetime: Int = 3600,
            mobileLoginEnabled: Bool = true, clock: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.port = port
            self.domain = domain
            self.consumerKey = consumerKey
            self.consumerSecret = consumerSecret
            self.users = users
            self.mfaUsers = mfaUsers
            self.mfaCode = mfaCode
            self.accessTokenLifetime = accessTokenLifetime
            self.mobileLoginEnabled = mobileLoginEnabled
            self.clock = clock
        }
    }

    /// Errors from `start()`.
    public enum SimulatorError: Error, Sendable {
        /// The server stopped before it reported its port.
        case didNotStart
        /// `start()` was called twice.
        case alreadyRunning
    }

    /// Counters of what the simulator served.
    public struct Counters: Sendable, Equatable {
        /// Login POSTs (both flows).
        public var logins = 0
        /// MFA verifications that succeeded.
        public var mfaVerifications = 0
        /// Preauthorized calls that issued a token.
        public var preauthorizations = 0
        /// Exchanges that issued a token.
        public var exchanges = 0
        /// Connect API requests answered (any status).
        public var apiRequests = 0
        /// Requests answered with an injected fault.
        public var injectedFaults = 0
    }

    /// The options the simulator was created with.
    public let options: Options
    let state: GarminSimState
    private let running = RunState()

    /// Creates a simulator (not yet listening).
    public init(options: Options = Options()) {
        self.options = options
        self.state = GarminSimState(options: options)
    }

    /// Starts listening on 127.0.0.1 and returns the base URL.
    public func start() async throws -> URL {
        let port = try await SimServer.start(
            GarminSimRoutes.router(self).buildResponder(), port: options.port, label: "LookoutSim.Garmin", running: running,
            alreadyRunning: SimulatorError.alreadyRunning, didNotStart: SimulatorError.didNotStart)
        return URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Stops the server.
    public func stop() async { await SimServer.stop(running) }

    // MARK: test API

    /// What has been served so far.
    public func counters() async -> Counters { await state.counters }

    /// The next `count` requests whose path starts with `pathPrefix` get `status` (429 adds
    /// `Retry-After: retryAfter` when given).
    public func injectFault(status: Int, pathPrefix: String, count: Int = 1, retryAfter: Int? = nil) async {
        await state.addFault(.init(status: status, pathPrefix: pathPrefix, remaining: count, retryAfter: retryAfter))
    }

    /// Invalidates every OAuth1 token (the next exchange gets 401).
    public func revokeOAuth1Tokens() async { await state.revokeOAuth1() }

    /// Every access token issued so far, expired or not (for secret scans in tests).
    public func issuedSecrets() async -> [String] { await state.issuedSecrets() }
}

extension SimResponse {
    /// The response with extra headers.
    func with(headers more: [(String, String)]) -> SimResponse {
        var r = self
        r.headers += more
        return r
    }
}
