import Foundation
import LookoutConfig
import Lua
import LookoutWire
import SignalKKit

/// A profile's opt-in to device access requests (contract §6.1):
/// `access = {description = "Lookout on the chart table", wait = "5m", permissions = "readwrite"}`
/// in `[signalk.NAME]`. With it, a connection that gets 401 (no token, or one that expired or was
/// revoked) requests access itself and waits up to `wait` for the administrator.
public struct SignalKAccessPolicy: Sendable, Equatable {
    /// What the administrator sees.
    public var description: String
    /// How long a connection or call waits for the approval, in seconds.
    public var wait: Double
    /// The permission asked for (`nil`: the administrator chooses).
    public var permissions: SignalKPermission?

    /// The default wait (5 minutes) and its bound (the server prunes requests after about 1 h).
    static let defaultWait: Double = 300
    static let maxWait: Double = 3600
    /// The longest description sent.
    static let maxDescription = 200

    /// Checks a description a script or the config gives: 1…200 characters, no control characters.
    public static func checkDescription(_ text: String) -> String? {
        if text.isEmpty { return "a description is required (the administrator sees it)" }
        if text.count > maxDescription { return "at most \(maxDescription) characters" }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "no control characters" }
        return nil
    }

    /// The `access` table of `profile`, `nil` when absent.
    static func parse(_ profile: HostConfig.Profile) throws(ConfigError) -> SignalKAccessPolicy? {
        guard let value = profile.settings["access"] else { return nil }
        if let problem = check(value) { throw profile.error(key: "access", problem) }
        let t = value.tableValue!
        return SignalKAccessPolicy(
            description: t["description"]!.stringValue!,
            wait: t["wait"].flatMap(Quantities.duration) ?? defaultWait,
            permissions: t["permissions"]?.stringValue.flatMap(SignalKPermission.init(rawValue:)))
    }

    /// The schema check of `access` (nil when acceptable).
    static func check(_ value: TOMLValue) -> String? {
        guard let t = value.tableValue else {
            return "expected a table such as {description = \"Lookout\", wait = \"5m\", permissions = \"readwrite\"}"
        }
        for entry in t.entries where !["description", "wait", "permissions"].contains(entry.key) {
            return "unknown key \(entry.key) in access (known: description, permissions, wait)"
        }
        guard let d = t["description"]?.stringValue else { return "access.description: a string is required" }
        if let problem = checkDescription(d) { return "access.description: \(problem)" }
        if let w = t["wait"] {
            guard let s = Quantities.duration(w), s >= 0, s <= maxWait else {
                return "access.wait: expected a duration from 0 to 1h such as \"5m\""
            }
        }
        if let p = t["permissions"] {
            guard let s = p.stringValue, SignalKPermission(rawValue: s) != nil else {
                return "access.permissions: expected \"readonly\", \"readwrite\" or \"admin\""
            }
        }
        return nil
    }
}

/// What a script learns about a profile's token (never the token): `none`, `pending`, `valid`,
/// `denied` or `expired`.
public enum SignalKTokenState: String, Sendable {
    /// No token and no request.
    case absent = "none"
    /// A request waits for the administrator.
    case pending
    /// A token is stored or configured and not known to be refused.
    case valid
    /// The administrator denied the request.
    case denied
    /// The token expired or the server refused it.
    case expired
}

/// The token of one `[signalk.NAME]` profile and its access requests, shared by every script of
/// the process that uses the profile.
///
/// - The token comes from the profile's token store (`<state>/tokens/signalk-profile-NAME_HOST_PORT.json`,
///   mode 0600; written by an approved access request) or from its `token_env`/`token_file`.
///   It is only ever handed to the profile's own server; scripts never see it.
/// - Requests go to the profile's server only, and their `href` must stay on it.
/// - At most one request runs per profile; a new one is sent at most once per
///   ``minimumInterval`` (a pending one is polled, not sent again); after DENIED none is sent
///   until a person asks (`lookout signalk token request`).
public actor SignalKProfileAccess {
    /// The profile name.
    public nonisolated let profile: String
    /// The profile's server (`http(s)://host:port`).
    public nonisolated let server: URL
    /// Where the token lives.
    public nonisolated let store: SignalKTokenStore
    /// The profile's opt-in, if any.
    public nonisolated let policy: SignalKAccessPolicy?
    private let configuredToken: String?
    /// The token the server last refused (401 on REST or at the upgrade).
    private var refusedToken: String?
    private var running: Task<Void, Never>?
    private var lastSubmit: Date?
    /// Whether the last request ended APPROVED (a token lost after that may be asked for at once).
    private var lastApproved = false
    private var lastFailure: String?

    /// The least time between two access requests sent for one profile (unless the last one was
    /// approved: a token revoked after that is asked for again at once).
    static let minimumInterval: TimeInterval = 60
    /// How often a pending request is polled.
    static let pollInterval: Duration = .seconds(1)

    /// An access for `profile` whose token file lives in `directory` (use ``shared(profile:server:directory:policy:configuredToken:)``).
    init(profile: String, server: URL, directory: URL, policy: SignalKAccessPolicy?, configuredToken: String?) {
        self.profile = profile
        self.server = server
        self.policy = policy
        self.configuredToken = configuredToken
        store = SignalKTokenStore(directory: directory, host: Self.storeKey(profile: profile, server: server))
    }

    /// The token file's key: the profile and its server's `host:port` (contract §6.3: tokens are
    /// scoped per server), so a profile pointed at another server never sends it the old token.
    public static func storeKey(profile: String, server: URL) -> String {
        "profile-\(profile)@" + SignalKTokenStore.hostKey(for: server)
    }

    private static let registry = Locked<[String: SignalKProfileAccess]>([:])

    /// The shared access of a profile (one per token file and server in the process).
    public static func shared(profile: String, server: URL, directory: URL, policy: SignalKAccessPolicy?, configuredToken: String?)
        -> SignalKProfileAccess
    {
        let fresh = SignalKProfileAccess(profile: profile, server: server, directory: directory, policy: policy,
                                         configuredToken: configuredToken)
        let key = fresh.store.fileURL.path + " " + server.absoluteString + " " + (configuredToken.map { String($0.hashValue) } ?? "-")
        return registry.withLock { map in
            if let existing = map[key], existing.policy == policy { return existing }
            map[key] = fresh
            return fresh
        }
    }

    /// The token to send: the stored one (unexpired, not refused), else the configured one.
    public func token() async -> String? {
        if let t = await store.token(), t != refusedToken { return t }
        if let t = configuredToken, t != refusedToken { return t }
        return nil
    }

    /// Records that the server refused `token` (401): a stored one is deleted. With the opt-in,
    /// a new request starts (within the rate limit).
    func refused(_ token: String?) async {
        guard let token else { return }
        refusedToken = token
        if await store.token() == token { try? await store.setToken(nil) }
        if let policy { _ = try? await start(description: policy.description, permissions: policy.permissions) }
    }

    /// The state a script sees.
    public func state() async -> SignalKTokenState {
        guard let r = try? await store.load() else { return .absent }
        if r.denied { return .denied }
        if let t = r.token {
            if let e = r.expires, e <= Date() { return .expired }
            return t == refusedToken ? .expired : .valid
        }
        if r.pendingHref != nil || running != nil { return .pending }
        if let c = configuredToken { return c == refusedToken ? .expired : .valid }
        return refusedToken != nil ? .expired : .absent
    }

    /// Starts a request (or resumes polling the pending one) in the background, unless one runs.
    /// Throws when DENIED is stored or a request was sent less than ``minimumInterval`` ago.
    func start(description: String, permissions: SignalKPermission?, clearDenied: Bool = false) async throws {
        if clearDenied { try await store.setDenied(false) }
        if running != nil { return }
        let record = try await store.load()
        if record.denied { throw SignalKAccessRefusal.denied(profile) }
        if record.pendingHref == nil, !lastApproved, let last = lastSubmit, Date().timeIntervalSince(last) < Self.minimumInterval {
            throw SignalKAccessRefusal.rateLimited(profile, seconds: Int(Self.minimumInterval - Date().timeIntervalSince(last)) + 1)
        }
        if record.pendingHref == nil { lastSubmit = Date(); lastApproved = false }
        lastFailure = nil
        let access = SignalKAccess(server: server, tokenStore: store, transport: SignalKSameServerTransport(server: server))
        let timeout = Duration.seconds(Int(SignalKAccessPolicy.maxWait))
        running = Task {
            do {
                try await access.requestAccess(description: description, permissions: permissions,
                                               pollInterval: Self.pollInterval, timeout: timeout)
                self.finished(nil)
            } catch {
                self.finished(error)
            }
        }
    }

    private func finished(_ error: (any Error)?) {
        running = nil
        lastApproved = error == nil
        if let error, !(error is CancellationError) {
            if case SignalKClientError.accessDenied = error { return }
            lastFailure = String(describing: error)
        }
    }

    /// Requests access (unless a token is valid) and waits up to `wait` seconds for the outcome.
    /// Returns the state then (`pending` when the wait ran out; the request goes on).
    public func request(description: String, permissions: SignalKPermission?, wait: Double, clearDenied: Bool = false) async throws
        -> SignalKTokenState
    {
        if await state() == .valid, await token() != nil { return .valid }
        try await start(description: description, permissions: permissions, clearDenied: clearDenied)
        let deadline = ContinuousClock.now + .milliseconds(Int(wait * 1000))
        while true {
            let s = await state()
            if s == .valid || s == .denied { return s }
            if running == nil {
                if let failure = lastFailure { throw SignalKAccessRefusal.failed(profile, failure) }
                return s
            }
            if ContinuousClock.now >= deadline { return s }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The hint an `auth` error carries when no request is made for the script.
    nonisolated var hint: String {
        "the server wants a token for [signalk.\(profile)]: run `lookout signalk token request \(profile)`, "
            + "set token_env or token_file, or add access = {description = \"…\"} to the profile"
    }
}

/// Why an access request was not made.
public enum SignalKAccessRefusal: Error, CustomStringConvertible {
    /// DENIED is stored for the profile.
    case denied(String)
    /// A request was sent less than a minute ago.
    case rateLimited(String, seconds: Int)
    /// The request failed (the server's answer, or the transport).
    case failed(String, String)

    /// What went wrong and what to do.
    public var description: String {
        switch self {
        case .denied(let p):
            return "the access request of [signalk.\(p)] was denied; run `lookout signalk token request \(p)` to ask again"
        case .rateLimited(let p, let s):
            return "an access request for [signalk.\(p)] was sent less than a minute ago; try again in \(s) s"
        case .failed(let p, let why): return "the access request of [signalk.\(p)] failed: \(why)"
        }
    }

    var luaError: LuaErrorInfo {
        switch self {
        case .denied: return LuaErrorInfo(code: "auth", message: description, service: "signalk")
        case .rateLimited: return LuaErrorInfo(code: "rate_limited", message: description, retryable: true, service: "signalk")
        case .failed: return LuaErrorInfo(code: "auth", message: description, retryable: true, service: "signalk")
        }
    }
}

/// The HTTP transport of access requests: refuses any URL that is not on the profile's server
/// (scheme, host and port), so a server cannot send the polling, or the token it leads to,
/// somewhere else through an absolute `href`.
struct SignalKSameServerTransport: SignalKHTTPTransport {
    let server: URL
    let inner: any SignalKHTTPTransport = SignalKAsyncHTTPTransport()

    func send(_ request: SignalKHTTPRequest, timeout: Duration) async throws -> SignalKHTTPResponse {
        guard request.url.scheme == server.scheme, request.url.host == server.host, request.url.port == server.port else {
            throw SignalKClientError.invalidURL("the server's href leads off the server (\(request.url.host ?? "no host"))")
        }
        return try await inner.send(request, timeout: timeout)
    }
}
