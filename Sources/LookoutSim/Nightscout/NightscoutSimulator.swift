import Foundation
import Hummingbird
import Logging
import LookoutWire

/// A local Nightscout server (cgm-remote-monitor 15.0.7 contract, see shared/specs/nightscout.md)
/// for tests and `lookout sim`. It binds to 127.0.0.1 only and speaks plain HTTP (as with
/// `INSECURE_USE_HTTP=true`). v1 and v3 share one store, so the v1/v3 interop traps reproduce.
///
/// ```swift
/// let sim = NightscoutSimulator(options: .init(apiSecret: "this is my long pass phrase", authFailDelay: .zero))
/// let base = try await sim.start()            // http://127.0.0.1:<port>
/// let token = await sim.addSubject(name: "caregiver", roles: ["readable"])
/// await sim.fill(days: 2, scenarios: [.overnightLow])
/// await sim.inject(.status(500), count: 3)
/// await sim.stop()
/// ```
///
/// Simplifications (spec §6.6), i.e. what the real server does and this one does not:
/// - no Socket.IO, no CORS, no HTTPS redirect (307), no request body size limits;
/// - v1 output is always JSON (`.csv`/`.tsv`/`.txt` extensions are ignored, except `status.txt`);
///   v3 `.csv`/`.xml` and `Accept: text/csv|application/xml` get 406 instead of CSV/XML;
/// - HTML in POSTed strings is sanitised by a model of DOMPurify (`NSPurifier`), not DOMPurify;
///   no `PREDICTIONS_MAX_SIZE`; no auto-prune;
/// - `/api/v2/authorization/subjects` and `/roles` keep `name`, `roles`/`permissions`, `notes` and
///   `created_at` of a body (other fields are dropped) and live in memory only;
/// - v1 routes not implemented: `times`, `slice`, `echo`, `count`, `notifications/ack`,
///   `/api/v2/authorization/permissions`, `properties`,
///   `ddata`, `summary`; status `authorized` is filled for `?token=` only; `.html`/`.js`/`.svg`/`.png` status forms;
/// - v1 bodies: JSON only (urlencoded accepted only by `notifications/loop`);
/// - `$in`/`$nin` in v1 `find` take a comma-separated list (not qs array syntax);
/// - Remote 2.0 (`/api/v2/remotecommands`, `NightscoutRemoteCommands.swift`) follows the client
///   contract (no released server has it); its commands live in memory only, and a simulated
///   receiving app (`RemoteApp`) moves them to `Success`/`Error`;
/// - Loop pushes are recorded (`receivedLoopNotifications()`), never sent; Nightscout only
///   forwards OTPs, a simulated Loop app (`LoopApp.swift`, `loopAppEvents()`) checks them and
///   uploads what Loop would;
/// - the "Failed authentication" admin notification is only counted (`failedAuthenticationCount()`).
public final class NightscoutSimulator: Sendable {
    /// Where documents live.
    public enum Persistence: Sendable {
        /// In memory only (lost when the simulator is released).
        case memory
        /// An SQLite file (GRDB); documents survive restarts. Subjects do not: pass subjects with
        /// fixed `id`s in `Options.subjects` for stable access tokens. JWTs never survive a restart
        /// (a new signing key, as after a Nightscout redeploy).
        case sqlite(path: String)
    }

    /// Configuration knobs (spec §6.2); defaults as the spec says.
    public struct Options: Sendable {
        /// `API_SECRET` (≥ 12 chars in a real site). `nil` disables secret auth and v1 writes.
        public var apiSecret: String?
        /// Subjects (access tokens) present at start.
        public var subjects: [NightscoutSubject]
        /// Extra or overriding roles: name → permissions.
        public var roles: [String: [String]]
        /// `AUTH_DEFAULT_ROLES` (default `readable`).
        public var defaultRoles: [String]
        /// TCP port on 127.0.0.1; 0 picks a free one.
        public var port: Int
        /// Storage backend.
        public var persistence: Persistence
        /// Injected clock (srvModified, JWT iat/exp, default windows).
        public var clock: @Sendable () -> Date
        /// `authFailDelay` per failed credential check (default 5 s; tests use 0).
        public var authFailDelay: Duration
        /// JWT lifetime in seconds (default 8 h).
        public var jwtLifetime: TimeInterval
        /// `API3_MAX_LIMIT` (default 1000).
        public var api3MaxLimit: Int
        /// `API3_DEDUP_FALLBACK_ENABLED` (default true).
        public var dedupFallback: Bool
        /// `API3_CREATED_AT_FALLBACK_ENABLED` (default true).
        public var createdAtFallback: Bool
        /// `API3_SECURITY_ENABLE` (default true).
        public var api3Security: Bool
        /// Loop APNs settings; when a field is nil the §5.1 precondition error is returned.
        public var loop: LoopSettings

        /// Loop push configuration (`LOOP_APNS_KEY`, `LOOP_APNS_KEY_ID`, `LOOP_DEVELOPER_TEAM_ID`).
        public struct LoopSettings: Sendable {
            /// `LOOP_APNS_KEY` (contents are not used; no real push is made).
            public var apnsKey: String?
            /// `LOOP_APNS_KEY_ID`.
            public var apnsKeyID: String?
            /// `LOOP_DEVELOPER_TEAM_ID` (must be 10 characters).
            public var developerTeamID: String?
            /// Simulated APNs failure reason (`APNs delivery failed: <reason>`), nil for success.
            public var apnsFailure: String?
            /// The simulated Loop app's OTP secret (Base32, §5.2); see `LoopApp.swift`.
            public var otpSecret: String
            /// Whether the simulated Loop app receives pushes and enacts them (false: phone offline).
            public var enact: Bool
            /// Seconds between the push and the Loop app handling it (> 300 makes it "Expired").
            public var pushDeliveryDelay: TimeInterval
            /// Override presets the Loop app knows (nil: any name).
            public var overridePresets: [String]?
            /// Whether `/api/v2/remotecommands` (Remote 2.0, spec §5.3) is served at start
            /// (default true; `setRemoteCommandsEnabled` changes it at run time).
            public var remoteCommands: Bool
            /// The pump's maximum bolus in U: the Remote 2.0 app refuses larger boluses.
            public var pumpMaxBolus: Double
            /// Seconds after `createdDate` the Remote 2.0 app still accepts a command's OTP.
            public var remoteCommandMaxAge: TimeInterval
            /// The default `otpSecret` (32 Base32 characters, like Loop's).
            public static let defaultOTPSecret = "LOOKOUTSIMULATEDLOOPOTPSECRET234"
            /// The `otpauth://` URL Loop would show for `otpSecret`.
            public var otpURL: String {
                "otpauth://totp/1714557600000?algorithm=SHA1&digits=6&issuer=Loop&period=30&secret=\(otpSecret)"
            }
            /// Creates Loop settings; the defaults are configured (so pushes are recorded).
            public init(
                apnsKey: String? = "SIMULATED-KEY", apnsKeyID: String? = "SIMKEYID01",
                developerTeamID: String? = "SIMTEAM001", apnsFailure: String? = nil,
                otpSecret: String = LoopSettings.defaultOTPSecret, enact: Bool = true,
                pushDeliveryDelay: TimeInterval = 0, overridePresets: [String]? = nil,
                remoteCommands: Bool = true, pumpMaxBolus: Double = 10, remoteCommandMaxAge: TimeInterval = 300
            ) {
                self.remoteCommands = remoteCommands
                self.pumpMaxBolus = pumpMaxBolus
                self.remoteCommandMaxAge = remoteCommandMaxAge
                self.apnsKey = apnsKey
                self.apnsKeyID = apnsKeyID
                self.developerTeamID = developerTeamID
                self.apnsFailure = apnsFailure
                self.otpSecret = otpSecret
                self.enact = enact
                self.pushDeliveryDelay = pushDeliveryDelay
                self.overridePresets = overridePresets
            }
        }

        /// Creates options with the spec's defaults.
        public init(
            apiSecret: String? = "this is my long pass phrase",
            subjects: [NightscoutSubject] = [],
            roles: [String: [String]] = [:],
            defaultRoles: [String] = ["readable"],
            port: Int = 0,
            persistence: Persistence = .memory,
            clock: @escaping @Sendable () -> Date = { Date() },
            authFailDelay: Duration = .milliseconds(5000),
            jwtLifetime: TimeInterval = 8 * 3600,
            api3MaxLimit: Int = 1000,
            dedupFallback: Bool = true,
            createdAtFallback: Bool = true,
            api3Security: Bool = true,
            loop: LoopSettings = LoopSettings()
        ) {
            self.apiSecret = apiSecret
            self.subjects = subjects
            self.roles = roles
            self.defaultRoles = defaultRoles
            self.port = port
            self.persistence = persistence
            self.clock = clock
            self.authFailDelay = authFailDelay
            self.jwtLifetime = jwtLifetime
            self.api3MaxLimit = api3MaxLimit
            self.dedupFallback = dedupFallback
            self.createdAtFallback = createdAtFallback
            self.api3Security = api3Security
            self.loop = loop
        }
    }

    /// Errors from `start()`.
    public enum SimulatorError: Error, Sendable {
        /// The server stopped before it reported its port.
        case didNotStart
        /// `start()` was called twice.
        case alreadyRunning
        /// `apiSecret` is shorter than 12 characters (Nightscout refuses such a secret).
        case apiSecretTooShort
    }

    /// The options the simulator was created with.
    public let options: Options
    let store: NightscoutStore
    let auth: NightscoutAuth
    let faults: SimFaults
    let loopRecorder: LoopRecorder
    let remoteCommandsState: RemoteCommandsState
    let requests = RequestLog()
    let remoteCommandRoutes = RemoteCommandRouteLog()
    let live = LiveFeed()
    private let running = RunState()

    /// Creates a simulator (not yet listening).
    public init(options: Options = Options()) {
        self.options = options
        self.store = NightscoutStore()
        self.auth = NightscoutAuth(options: options)
        self.faults = SimFaults()
        self.loopRecorder = LoopRecorder()
        self.remoteCommandsState = RemoteCommandsState(enabled: options.loop.remoteCommands)
    }

    /// Starts listening on 127.0.0.1 and returns the base URL (e.g. `http://127.0.0.1:54321`).
    /// Throws ``SimulatorError/apiSecretTooShort`` for a secret under 12 characters.
    public func start() async throws -> URL {
        if let secret = options.apiSecret, secret.count < 12 { throw SimulatorError.apiSecretTooShort }
        if case .sqlite(let path) = options.persistence { try await store.open(path: path) }
        let port = try await SimServer.start(
            NightscoutRoutes.router(self).buildResponder(), port: options.port, label: "LookoutSim.Nightscout", running: running,
            alreadyRunning: SimulatorError.alreadyRunning, didNotStart: SimulatorError.didNotStart)
        return URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Stops the server and waits until it has shut down.
    public func stop() async {
        await SimServer.stop(running)
    }

    // MARK: test/seed API

    /// Adds (or replaces by name) a subject and returns its access token (format §1.2).
    @discardableResult
    public func addSubject(name: String, roles: [String]) async -> String {
        await auth.addSubject(NightscoutSubject(name: name, roles: roles))
    }

    /// Adds (or replaces, by name) a subject with its own `id`, so its token is the same as when
    /// it was added before with that id (`lookout sim nightscout --state`); returns the token.
    public func addSubject(_ subject: NightscoutSubject) async -> String {
        await auth.addSubject(subject)
    }

    /// The access token of a subject given in the options or added later.
    public func accessToken(forSubject name: String) async -> String? {
        await auth.accessToken(named: name)
    }

    /// The delay in milliseconds the next auth resolution from 127.0.0.1 would wait (§1.5).
    public func pendingAuthDelayMilliseconds(client: String = "127.0.0.1") async -> Int64 {
        await auth.pendingDelay(for: client)
    }

    /// Number of failed credential checks so far ("Failed authentication" notifications).
    public func failedAuthenticationCount() async -> Int { await auth.failedAttempts }

    /// Lowercase hex SHA-1 of a UTF-8 string (what clients send as `api-secret`).
    public static func sha1Hex(_ s: String) -> String { NSHash.sha1(s) }

    /// The v3 identifier the server computes for a document (§3.9: UUID v5 of
    /// `<device>_<date>[_<eventType>]` in the `NightscoutRocks!` namespace).
    public static func v3Identifier(device: String?, date: Int64, eventType: String?) -> String {
        var d: [String: JSONValue] = ["date": .int(date)]
        if let device { d["device"] = .string(device) }
        if let eventType { d["eventType"] = .string(eventType) }
        return NSIdentifier.calculate(d)
    }

    /// Everything `POST /api/v2/notifications/loop` received, oldest first.
    public func receivedLoopNotifications() async -> [LoopNotification] { await loopRecorder.all }

    /// Inserts documents directly (as if written through v1: no `srvModified`), for seeding.
    public func seed(_ collection: String, _ docs: [JSONValue]) async {
        let now = NSDates.ms(options.clock())
        await store.seedV1(collection, docs.compactMap(\.objectValue), now: now)
    }

    /// Removes every document of every collection (subjects and faults stay).
    public func clearData() async {
        await store.transact { data in data = NSStoreData() }
    }

    /// All stored documents of a collection (including soft-deleted), as stored.
    public func documents(_ collection: String) async -> [JSONValue] {
        await store.dump(collection)
    }
}

/// Holds the server task.
actor RunState {
    var task: Task<Void, any Error>?
    func set(_ t: Task<Void, any Error>) -> Bool {
        if task != nil { return false }
        task = t
        return true
    }
    @discardableResult func clear() -> Task<Void, any Error>? {
        defer { task = nil }
        return task
    }
}

/// A settable clock for tests: pass `clock.now` as `Options.clock`.
public final class SimulatedClock: Sendable {
    private let current: Locked<Date>
    /// Starts at `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_714_557_600)) { current = Locked(start) }
    /// The current simulated time.
    @Sendable public func now() -> Date { current.withLock { $0 } }
    /// Moves the clock forward.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
    /// Sets the clock.
    public func set(_ d: Date) { current.withLock { $0 = d } }
}
