import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import LookoutWire

/// A local Signal K server that behaves like signalk-server 2.31.1 (contract: shared/specs/signalk.md)
/// for tests and `lookout sim signalk`. Plain HTTP and WebSocket on 127.0.0.1, security off unless
/// `Options.security` is set.
///
/// ```swift
/// let clock = SimulatedClock()
/// let sim = SignalKSimulator(options: .init(rate: 10, seed: 7, clock: clock.now, autoTick: false))
/// let base = try await sim.start()        // http://127.0.0.1:<port>
/// clock.advance(by: 0.1); await sim.tick() // one boat update (manual driving)
/// await sim.dropAllConnections()           // fault hooks: drop, restart, malformed frame
/// ```
///
/// What it does (spec sections):
/// - §1.2 `GET /signalk` discovery built from the request's `Host` (and `X-Forwarded-Proto`),
///   `server.id` `signalk-server-node`, `version` = server version; no `signalk-tcp` (no TCP interface).
/// - §2.1/§4.1 `GET /signalk/v1/api/` full model (`self` = `vessels.<urn>`, root `version` "0.1.0",
///   `sources` tree, leaves with `value`/`$source`/`timestamp`/`pgn`, `values` from a second source);
///   any sub-path with `vessels/self` resolved, traversal into leaves; `/signalk/v1/api/self` is the
///   JSON string; unknown paths and `/signalk/v1/api` without the slash are 404.
/// - §3.1/§3.3/§3.6 stream `/signalk/v1/stream`: `subscribe=self` (default) `|all|none` (other
///   values: like `all`, no cached values), `sendCachedValues=false`; hello first (with
///   `serverStartId`), then cached values as single-value deltas oldest first, then deltas as the
///   producer built them (context never `vessels.self`, each update with `source` and `$source`).
/// - §3.5/§3.7 subscribe messages: glob context/path matching, absent context = all contexts,
///   immediate replay, one value per delta, `minPeriod` drop-debounce, `period`/`fixed` windows that
///   start at the first value and send only what arrived (no resend), warning JSON-string frames
///   (once per matching path key) for `ideal`/unknown policies, `format` ≠ delta and
///   inconsistent options; subscriptions accumulate without dedupe; rows without `path` are skipped.
/// - §3.8 only `{"context":"*","unsubscribe":[{"path":"*"}]}` works (clears subscriptions and the
///   implicit stream); any other unsubscribe gets the error string and the socket is closed.
/// - §3.9 WebSocket pings (interval configurable); invalid JSON from clients is ignored. Deltas a
///   client sends (`updates`) are published like any provider's.
/// - §4.2/§5 REST PUT: context = first two segments, path = the rest with `/` and `.` alike; 400
///   `input is missing a value`, 400 `invalid path` (< 3 segments); handlers under the literal
///   `vessels.self` answer COMPLETED with any `statusCode` (the HTTP status mirrors it) or PENDING
///   202 (`href` and `action.href`), finished by `completeRequest(_:statusCode:message:)`; every
///   other path gets the 405 reply `PUT not supported for <path>`. `GET /signalk/v1/requests/<id>`
///   is always 200 with the reply, 500 `Unable to check request: not found` for unknown ids.
/// - §4.3 WebSocket `{"requestId","context","put":{path,value}}`: the same handlers; the replies
///   (COMPLETED, or PENDING then COMPLETED; 405 for unhandled paths, 403 from a socket that may
///   not write) arrive on the socket with the client's `requestId`, which is also polled at
///   `/signalk/v1/requests/<requestId>`; `{"requestId","query":true}` answers the current reply or
///   `{"requestId","statusCode":404}`.
/// - §4.1 `GET …/vessels/<id>/<path>/meta` and `…/meta/<key>` (e.g. `units`) from the schema's
///   metadata for the boat's paths (`SignalKMeta`), 404 for other paths; `sendMeta=all` sends a
///   meta delta before the first value of each path (and its parent groups), as `ws.ts` does.
///   The full model's leaves carry their path's `meta` from their first value on (`addValue`;
///   meta PUTs and `meta` deltas merge onto it); `GET …/vessels/<id>/meta` maps path → meta; every
///   meta served (REST trees, `/meta`, meta deltas) has `displayUnits` resolved as
///   signalk-server's default unit preferences do (`SignalKDisplayUnits`: knots, degrees, °C …).
/// - §6.1 access requests: security off → 404 `{"message":"Access requests not available. …"}`;
///   on → 202 PENDING reply (`href` `/signalk/v1/requests/<id>`, `ip`), 400 replies for a missing
///   description/clientId, invalid permissions or a duplicate pending clientId, 413 over 10 KiB,
///   503 at 100 pending; an admin approves/denies with `PUT /skServer/security/access/requests/
///   <clientId>/<approved|denied>` (body `{"permissions","expiration"}`; 200 `Request updated`, 401
///   `"Security config not allowed"` without an admin token, 500 `Unable update request`), lists
///   them with `GET /skServer/security/access/requests`, or a test calls
///   `approveAccessRequest(clientId:…)` / `denyAccessRequest(clientId:)`; polling then shows
///   `accessRequest` APPROVED + token or DENIED (the device's requested permissions win over the
///   admin's, as on the server); `revokeDevice(clientId:)` invalidates a device token;
///   `Options.onAccessRequest` hears of each new request. `GET /skServer/loginStatus`.
/// - §7 `POST /signalk/v1/auth/login` (and `/login`) with `Options.users` (permission from
///   `Options.userRoles`, default `admin`): 200
///   `{"timeToLive":null,"token":…}` (+ `JAUTHENTICATION` cookie), 401
///   `{"statusCode":401,"message":"Invalid username/password"}`; `PUT /signalk/v1/auth/logout` →
///   `"Logout OK"`. Tokens are HS256 JWTs `{"device":<clientId>}` / `{"id":<user>}` with `iat` and
///   optional `exp` (checked with the injected clock).
/// - §4.1/§8 with security on, `/signalk/v1/api/…` needs a token (cookie `JAUTHENTICATION`, then
///   `Authorization: Bearer|JWT`, then `X-Authorization`): none → 401 `Unauthorized`, invalid/expired/
///   revoked → 401 `bad auth token`; PUT with a `readonly` token → 401 `{"error":"Permission Denied"}`.
/// - §6.2/§7 on the stream: `{"requestId","accessRequest":{clientId,description,permissions?}}` gets
///   the PENDING reply and, once an admin decides, the COMPLETED one on the same socket (a second
///   while one is pending: 400 `A request has already been submitted`; security off: 404 without
///   `requestId`); `{"requestId","login":{username,password}}` gets COMPLETED 200 with
///   `login:{timeToLive,token}` or 401 with `login:{}` (security off: no reply). An approval or a
///   login authenticates the socket in place (an anonymous one then gets its `subscribe` stream).
/// - §3.2 with security on, the WebSocket upgrade takes `?token=`, then the headers: a bad token →
///   401 `{"error":"bad auth token"}` (no upgrade; Hummingbird's 400 is rewritten, see
///   `SignalKUpgradeRefusal`); no token → the hello, then silence, and the socket's deltas
///   are ignored; deltas from a `readonly` token are ignored too.
///
/// Simplifications (what signalk-server does and this one does not):
/// - no periodic token re-check, no ACLs, no
///   `allowDeviceAccessRequests` switch, of the admin routes only the access-request ones and
///   `loginStatus`, no 302 for non-JSON logins, no 429/per-IP limits, no sliding-session refresh,
///   the bad-token cookie is not cleared; `allowReadOnly` (anonymous reads) is all or nothing;
/// - §4.4 a PUT no handler serves, to a path a socket with write access publishes, is forwarded to
///   that socket as `{"requestId","context","put":[{"path","value"}]}` (400 when several sources
///   publish it and the PUT names none); the socket's replies with that `requestId` update the
///   request; 504 after `putForwardTimeout`.
/// - `source` is passed to a registered handler but never required (one handler per path), no
///   notification PUTs, no DELETE; requests are never pruned;
/// - meta PUTs (`…/meta`, `…/meta/<key>`: 202 PENDING, then COMPLETED 200; a `meta` delta to
///   `sendMeta=all` sockets) are kept in memory only, without `displayUnits` category checks;
///   the schema's meta covers the boat's own paths; `displayUnits` come from the default unit
///   preferences only (preset `nautical-metric`, no per-user presets, no unit-preferences API);
/// - no `sourcePolicy`/`excludeSources`/`announceNewPaths`, no source priorities (every source is
///   delivered), no `serverevents`/`events`, no `log` path, no backpressure, no staleness;
/// - the context-as-radius subscription object matches nothing; root (empty-path) values are
///   cached flattened (`name`, `mmsi`, …), so a subscription to the path `""` itself matches nothing;
/// - client `updates` (from sockets that may write) get `$source` `ws.<n>` when they carry no source;
/// - `period` windows and `minPeriod` are measured with the injected clock and flushed on `tick()`
///   (and every 50 ms of wall time when ticking automatically), not by wall-clock timers;
/// - the unsubscribe error echoes the message with sorted keys (JSON.stringify keeps input order);
/// - 404 bodies are plain text `Cannot GET <path>`; no mDNS, no TCP/NMEA streams, no history;
/// - playback sends one recorded delta per tick (looping), not by the recorded timestamps, and by
///   default restamps each update with the current clock.
public final class SignalKSimulator: Sendable {
    /// The signalk-server version the simulator claims (hello, discovery).
    public static let serverVersion = "2.31.1"

    /// Configuration.
    public struct Options: Sendable {
        /// TCP port on 127.0.0.1; 0 picks a free one.
        public var port: Int
        /// Updates per second (boat steps or playback lines); clamped to 0.01…200.
        public var rate: Double
        /// Seed of the generated boat.
        public var seed: UInt64
        /// The self vessel's MMSI (self id `urn:mrn:imo:mmsi:<mmsi>`).
        public var selfMMSI: String
        /// The self vessel's name.
        public var vesselName: String
        /// A file of recorded deltas (one JSON delta per line) to play instead of the boat.
        public var playback: URL?
        /// Restamp played-back updates with the clock (false keeps the recorded timestamps).
        public var rewritePlaybackTimestamps: Bool
        /// Injected clock (timestamps, `period`/`minPeriod` timing).
        public var clock: @Sendable () -> Date
        /// Tick by itself at `rate` on wall time (false: only `tick()` moves the data; for tests).
        public var autoTick: Bool
        /// WebSocket ping interval (signalk-server: 30 s).
        public var pingInterval: Duration
        /// Kept for source compatibility: PUT (§4.2) and `GET /signalk/v1/requests/<id>` (§5) are
        /// always answered now, as on signalk-server (405 for paths no handler serves).
        public var put: Bool
        /// PUT action handlers by dotted path under the literal context `vessels.self`; other paths
        /// get the 405 reply `PUT not supported for <path>`.
        public var putHandlers: [String: SignalKPutHandler]
        /// Security on: REST needs a token (401 otherwise), PUT a `readwrite`/`admin` one; access
        /// requests (§6.1) and login (§7) are served. Off (default): everything is open and access
        /// requests get the 404 JSON of a server without security.
        public var security: Bool
        /// User names and passwords for `POST /signalk/v1/auth/login`.
        public var users: [String: String]
        /// Each user's permission (`readonly`, `readwrite` or `admin`); a user not listed is `admin`.
        public var userRoles: [String: String]
        /// signalk-server's "Allow Readonly Access": with security on, requests and sockets without
        /// a token may read (REST GET, the stream); writes still need a token.
        public var allowReadOnly: Bool
        /// Called with each new pending access request (for `lookout sim signalk` to print it).
        public var onAccessRequest: (@Sendable (SignalKAccessRequestNotice) -> Void)?
        /// How long a PUT forwarded to a publishing socket (§4.4) may stay PENDING before it is
        /// COMPLETED with 504 (signalk-server: 60 s).
        public var putForwardTimeout: Duration = .seconds(60)
        /// The signing key and approved devices to start with (nil: a random key, no devices), so
        /// tokens issued by an earlier run stay valid.
        public var securityState: SignalKSecurityState?
        /// Called with the new state whenever a device is approved or revoked (to keep it).
        public var onSecurityStateChange: (@Sendable (SignalKSecurityState) -> Void)?

        /// Creates options.
        public init(
            port: Int = 0, rate: Double = 1, seed: UInt64 = 1, selfMMSI: String = "230099999",
            vesselName: String = "Lookout", playback: URL? = nil, rewritePlaybackTimestamps: Bool = true,
            clock: @escaping @Sendable () -> Date = { Date() }, autoTick: Bool = true,
            pingInterval: Duration = .seconds(30), put: Bool = false,
            putHandlers: [String: SignalKPutHandler] = [:], security: Bool = false, users: [String: String] = [:],
            userRoles: [String: String] = [:], allowReadOnly: Bool = false,
            onAccessRequest: (@Sendable (SignalKAccessRequestNotice) -> Void)? = nil
        ) {
            self.userRoles = userRoles
            self.allowReadOnly = allowReadOnly
            self.onAccessRequest = onAccessRequest
            self.port = port
            self.rate = rate
            self.seed = seed
            self.selfMMSI = selfMMSI
            self.vesselName = vesselName
            self.playback = playback
            self.rewritePlaybackTimestamps = rewritePlaybackTimestamps
            self.clock = clock
            self.autoTick = autoTick
            self.pingInterval = pingInterval
            self.put = put
            self.putHandlers = putHandlers
            self.security = security
            self.users = users
        }
    }

    /// Errors from `init`/`start()`.
    public enum SimulatorError: Error, Sendable {
        /// The server stopped before it reported its port.
        case didNotStart
        /// `start()` was called twice.
        case alreadyRunning
        /// The playback file holds no delta.
        case emptyPlayback(String)
    }

    /// The options the simulator was created with.
    public let options: Options
    /// The self id, e.g. `urn:mrn:imo:mmsi:230099999`.
    public let selfID: String
    /// The self context, e.g. `vessels.urn:mrn:imo:mmsi:230099999`.
    public var selfContext: String { "vessels." + selfID }
    let hub: SignalKHub
    let authority: SignalKAuthority
    /// Metadata written by meta PUTs.
    let metaStore = SignalKMetaStore()
    private let running = RunState()
    private let driver = RunState()
    private let portBox = Locked(0)  // the bound port, readable synchronously

    /// Creates a simulator (not yet listening). Throws when the playback file cannot be read.
    public init(options: Options = Options()) throws {
        var o = options
        o.rate = min(200, max(0.01, o.rate.isFinite ? o.rate : 1))
        self.options = o
        selfID = "urn:mrn:imo:mmsi:\(o.selfMMSI)"
        let store = SignalKStore(
            selfID: selfID, staticSelf: ["mmsi": .string(o.selfMMSI), "name": .string(o.vesselName)])
        hub = SignalKHub(store: store, serverVersion: Self.serverVersion)
        authority = SignalKAuthority(
            users: o.users, roles: o.userRoles, clock: o.clock, onAccessRequest: o.onAccessRequest,
            state: o.securityState, onStateChange: o.onSecurityStateChange)
        if let url = o.playback {
            let playback = try SignalKPlayback(contentsOf: url)
            initialSource = .playback(playback, rewriteTimestamps: o.rewritePlaybackTimestamps)
        } else {
            initialSource = .boat(SignalKBoat(seed: o.seed))
        }
    }
    private let initialSource: SignalKSource

    /// Starts listening on 127.0.0.1 and returns the base URL (e.g. `http://127.0.0.1:54321`).
    /// The first update is published before this returns, so the cache is never empty.
    public func start() async throws -> URL {
        let (portStream, portCont) = AsyncStream<Int>.makeStream()
        let hub = self.hub, authority = self.authority, security = options.security
        let clock = options.clock
        let sim = self
        var logger = Logger(label: "LookoutSim.SignalK")
        logger.logLevel = .critical
        let wsConfig = WebSocketServerConfiguration(
            maxFrameSize: 1 << 20, autoPing: .enabled(timePeriod: options.pingInterval))
        let app = Application(
            responder: SignalKRoutes.router(self).buildResponder(),
            server: .http1WebSocketUpgrade(configuration: .init(ws: wsConfig)) { request, channel, _ in
                let (path, query) = SignalKRoutes.split(request.path ?? "/")
                guard path == "/signalk/v1/stream" else { return .dontUpgrade }
                let q = SimRequest.parseQuery(query)
                let subscribe = q.first { $0.0 == "subscribe" }?.1
                let sendCached = q.first { $0.0 == "sendCachedValues" }?.1 != "false"
                let sendMeta = q.first { $0.0 == "sendMeta" }?.1 == "all"
                let allowReadOnly = sim.options.allowReadOnly
                var access = SKAccess.open
                if security {
                    // §3.2: `?token=` first, then the headers; a bad token fails the upgrade with 401.
                    var headers: [String: String] = [:]
                    for f in request.headerFields { headers[f.name.canonicalName.lowercased()] = f.value }
                    switch await authority.check(token: q.first { $0.0 == "token" }?.1 ?? SignalKAuthority.token(headers: headers)) {
                    case .none: access = allowReadOnly ? .granted(permission: "readonly") : .anonymous
                    case .bad:
                        // Hummingbird answers a refused upgrade with 400; signalk-server with 401.
                        await SignalKUpgradeRefusal.install(on: channel)
                        return .dontUpgrade
                    case .ok(let p): access = .granted(permission: p.permission)
                    }
                }
                let ip = channel.remoteAddress?.ipAddress ?? "127.0.0.1"
                return .upgrade([:]) { [access] inbound, outbound, _ in
                    let conn = await hub.open(
                        subscribe: subscribe, sendCachedValues: sendCached, access: access, sendMeta: sendMeta, now: clock())
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            do {
                                for try await message in inbound.messages(maxSize: 1 << 20) {
                                    guard case .text(let text) = message else { continue }
                                    if await SignalKWebSocketRequests.handle(text, conn: conn, ip: ip, sim: sim) { continue }
                                    await hub.receive(text, from: conn.id, now: clock())
                                }
                            } catch {}
                            conn.finish()
                        }
                        group.addTask {
                            for await item in conn.stream {
                                switch item {
                                case .text(let text):
                                    do { try await outbound.write(.text(text)) } catch { return }
                                case .close(let code, let reason):
                                    try? await outbound.close(.init(codeNumber: Int(code)), reason: reason)
                                    return
                                }
                            }
                        }
                        await group.next()
                        group.cancelAll()
                    }
                    await hub.close(conn.id)
                }
            },
            configuration: .init(address: .hostname("127.0.0.1", port: options.port), serverName: nil),
            onServerRunning: { channel in
                portCont.yield(channel.localAddress?.port ?? 0)
                portCont.finish()
            },
            logger: logger)
        await hub.setSource(initialSource)
        await hub.tick(dt: 0, now: clock())
        let task = Task {
            defer { portCont.finish() }
            try await app.run()
        }
        guard await running.set(task) else {
            task.cancel()
            throw SimulatorError.alreadyRunning
        }
        var it = portStream.makeAsyncIterator()
        guard let port = await it.next(), port > 0 else {
            _ = try? await task.value
            await running.clear()
            throw SimulatorError.didNotStart
        }
        portBox.withLock { $0 = port }
        if options.autoTick { await startDriver() }
        return URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Stops ticking and the server. (Tests keep one simulator for the whole process instead:
    /// stopping Hummingbird while a connection arrives can trap in NIO.)
    public func stop() async {
        if let d = await driver.clear() { d.cancel(); _ = try? await d.value }
        await hub.dropAll()
        guard let task = await running.clear() else { return }
        task.cancel()
        _ = try? await task.value
    }

    /// The port it listens on (0 before `start()`).
    public var port: Int { portBox.withLock { $0 } }
    /// The REST base, `http://127.0.0.1:<port>/signalk/v1/api/`.
    public var httpEndpoint: URL { URL(string: "http://127.0.0.1:\(port)/signalk/v1/api/")! }
    /// The stream URL, `ws://127.0.0.1:<port>/signalk/v1/stream`.
    public var streamEndpoint: URL { URL(string: "ws://127.0.0.1:\(port)/signalk/v1/stream")! }

    private func startDriver() async {
        let hub = self.hub, clock = options.clock
        let interval = 1 / options.rate
        let task = Task<Void, any Error> {
            let wall = ContinuousClock()
            var next = wall.now.advanced(by: .seconds(interval))
            let step = Duration.seconds(min(interval, 0.05))
            while !Task.isCancelled {
                try await Task.sleep(for: step)
                let now = wall.now
                if now >= next {
                    await hub.tick(dt: interval, now: clock())
                    next = next.advanced(by: .seconds(interval))
                    if now - next > .seconds(1) { next = now.advanced(by: .seconds(interval)) }
                } else {
                    await hub.pump(now: clock())
                }
            }
        }
        _ = await driver.set(task)
    }

    // MARK: driving and faults

    /// One update: the boat moves `1/rate` seconds (or the next recorded delta is played), stamped
    /// with the clock's time; then `period` windows that ended are flushed. When this returns,
    /// everything it produced is queued on every socket, in order.
    public func tick() async {
        await hub.tick(dt: 1 / options.rate, now: options.clock())
    }

    /// Flushes `period` windows that have ended at the clock's time, without new data.
    public func pump() async { await hub.pump(now: options.clock()) }

    /// Publishes a delta as if a provider sent it (no context = self; `vessels.self` resolved).
    public func publish(_ delta: JSONValue) async {
        await hub.publish(delta, now: options.clock(), providerID: "injected")
    }

    /// Fault: closes every WebSocket (close code 1001, going away).
    public func dropAllConnections() async { await hub.dropAll() }

    /// Fault: a server restart: every WebSocket is closed and a new `serverStartId` is taken, so
    /// the next connection's hello differs.
    public func restart() async { await hub.restart() }

    /// Fault: sends a truncated JSON text frame on every WebSocket.
    public func sendMalformedFrame() async { await hub.sendMalformed() }

    /// The current `serverStartId` (changes on `restart()`).
    public func serverStartID() async -> String { await hub.serverStartID }

    /// Number of open WebSockets.
    public func connectionCount() async -> Int { await hub.connectionCount }

    /// The full model as `GET /signalk/v1/api/` returns it.
    public func fullModel() async -> JSONValue { await hub.store.fullModel }
}

extension SignalKHub {
    func setSource(_ s: SignalKSource) { source = s }
}

