import Foundation
import LookoutWire
import LookoutConfig
import Lua
import SignalKKit

/// `signalk`: Signal K servers (boats) for scripts.
///
/// `signalk.connect "boat"` reads `[signalk.boat]` from the config; `signalk.connect{…}` takes the
/// options itself. Both wait for the server's hello and return a boat whose stream runs in the
/// background (`nil, err` when the server cannot be reached). Methods wait without blocking other
/// tasks and return `nil, err` on failure (`err.service == "signalk"`). See `Stubs/signalk.lua`.
public struct SignalKModule: LuaModule {
    public let name = "signalk"
    public var stub: String { String(decoding: PackageResources.signalk_lua, as: UTF8.self) }

    /// Where `signalk.connect "name"` finds profiles.
    let config: HostConfig
    /// Where the profiles' `token_env` secrets are read from (never for a name a script gives).
    let environment: [String: String]

    /// Where connections report whether they are up (`lookout serve`'s health), if anywhere.
    let health: HealthRegistry?
    /// Where profiles' tokens from access requests are kept (`<state>/tokens`).
    let tokens: URL

    /// A module that finds profiles in `config` and their secrets in `environment`; connections report to `health` when given.
    public init(config: HostConfig, paths: LookoutPaths, environment: [String: String] = ProcessInfo.processInfo.environment,
         health: HealthRegistry? = nil) {
        self.config = config
        self.environment = environment
        self.health = health
        tokens = URL(fileURLWithPath: paths.tokensDirectory, isDirectory: true)
    }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.register(type: SignalKLuaBoat.type, methods: SignalKLuaBoat.methods.merging(SignalKLuaBoat.publishMethods) { a, _ in a }
            .merging(SignalKLuaBoat.accessMethods) { a, _ in a })
        try SignalKLuaBoat.installStreamMethods(engine: engine, stack: stack)
        let config = self.config, environment = self.environment, health = self.health, tokens = self.tokens
        engine.pushLibrary([
            "connect": { call in
                if let name = call.stack.string(at: call.index(1)) {
                    return try Self.connect(call, health: health) { try SignalKConnection.profile(name, config: config, environment: environment, tokens: tokens) }
                }
                guard call.stack.kind(at: call.index(1)) == .table else {
                    throw call.argumentError(1, "profile name or options table expected, got \(call.stack.typeName(at: call.index(1)))")
                }
                return try Self.connect(call, health: health) { try SignalKConnection.options(call, 1) }
            },
            "discover": { call in
                let opts = try call.options(1)
                if let unknown = opts.keys.sorted().first(where: { $0 != "timeout" }) {
                    throw call.argumentError(1, "unknown option '\(unknown)' (known: timeout)")
                }
                var seconds = 3.0
                if let t = opts["timeout"] {
                    seconds = try call.duration(t, argument: 1, what: "opts.timeout", in: LuaRange(0, 60, unit: .seconds))
                }
                let timeout = Quantities.swiftDuration(seconds)
                return try SignalKLuaBoat.wait(call, "signalk discover", {
                    try await SignalKDiscovery.browse(timeout: timeout)
                }) { stack, services in
                    stack.push(LuaValue.array(services.map(Self.describe)))
                    return 1
                }
            },
        ], prefix: "signalk.", on: stack)
        engine.pushLibrary([
            "rad_to_deg": { call in call.returning(.double(SignalKUnits.degrees(fromRadians: try call.number(1)))) },
            "deg_to_rad": { call in call.returning(.double(SignalKUnits.radians(fromDegrees: try call.number(1)))) },
            "ms_to_knots": { call in call.returning(.double(SignalKUnits.knots(fromMetersPerSecond: try call.number(1)))) },
            "knots_to_ms": { call in call.returning(.double(SignalKUnits.metersPerSecond(fromKnots: try call.number(1)))) },
            "k_to_c": { call in call.returning(.double(SignalKUnits.celsius(fromKelvin: try call.number(1)))) },
            "c_to_k": { call in call.returning(.double(SignalKUnits.kelvin(fromCelsius: try call.number(1)))) },
            "display": { call in
                let value = try call.number(1)
                let meta: JSONValue
                switch try call.value(2, name: "meta") {
                case .string(let units): meta = ["units": .string(units.description)]
                case let v:
                    do { meta = try SignalKLuaValues.skValue(v) } catch let e as LuaConversionError {
                        throw call.argumentError(2, e.description)
                    }
                }
                guard let shown = SignalKUnits.display(value, meta: meta) else { return call.returning(.nil) }
                return call.returning(.text(shown.text), .double(shown.value), .text(shown.symbol))
            },
        ], prefix: "signalk.units.", on: stack)
        stack.setField("units", in: -2)
    }

    /// A discovered server as a script sees it.
    static func describe(_ s: SignalKService) -> LuaValue {
        var fields: [String: LuaValue] = [
            "name": .text(s.name), "type": .text(s.type), "host": .text(s.host), "port": .int(Int64(s.port)),
            "roles": .array(s.roles.map { .text($0) }),
        ]
        if let url = s.url { fields["url"] = .text(url.absoluteString) }
        if let urn = s.selfURN { fields["self"] = .text(urn) }
        return .object(fields)
    }

    /// What `connect` waits for.
    struct Opened: Sendable {
        let stream: SignalKStream
        let rest: SignalKREST
        let feed: SignalKFeed
        let pump: Task<Void, Never>
    }

    /// Starts the stream and waits for its hello; pushes the boat, or `nil, err` for a
    /// configuration problem or a server that cannot be reached (bad arguments raise).
    static func connect(_ call: LuaCall, health: HealthRegistry?, _ connection: () throws -> SignalKConnection) throws -> LuaReturn {
        let c: SignalKConnection
        do {
            c = try connection()
        } catch let raise as LuaRaise {
            throw raise
        } catch {
            return call.failure(LuaErrorInfo.signalk(error))
        }
        let reporter = health.map { SignalKHealthReporter(health: $0, name: "signalk:" + c.label, script: call.engine.options.name) }
        return try SignalKLuaBoat.wait(call, "signalk connect \(c.label)", { try await open(c, reporter: reporter) }) { [engine = call.engine] stack, opened in
            let boat = SignalKLuaBoat(stream: opened.stream, rest: opened.rest, feed: opened.feed, pump: opened.pump, label: c.label,
                                      access: c.access)
            engine.anchor(boat)
            engine.push(object: boat, type: SignalKLuaBoat.type, on: stack)
            return 1
        }
    }

    /// Connects: the pump reads the stream's events from the start, so the first state change
    /// that settles the connection (hello, or a failed first attempt) ends the wait.
    static func open(_ c: SignalKConnection, reporter: SignalKHealthReporter? = nil) async throws -> Opened {
        do {
            return try await openOnce(c, reporter: reporter)
        } catch let e as LuaErrorInfo where e.code == "auth" {
            // A refused or missing token: with the profile's opt-in, request access, wait, and try again.
            guard let access = c.access, let policy = access.policy else { throw e }
            let state: SignalKTokenState
            do {
                state = try await access.request(description: policy.description, permissions: policy.permissions, wait: policy.wait)
            } catch let refusal as SignalKAccessRefusal {
                throw refusal.luaError
            }
            guard state == .valid else {
                throw LuaErrorInfo(code: "auth", message: "no token for [signalk.\(access.profile)] yet: the access request is "
                    + state.rawValue + (state == .pending ? " (approve it on the server)" : ""), retryable: state == .pending,
                    status: e.status, service: "signalk")
            }
            return try await openOnce(c, reporter: reporter)
        }
    }

    /// The token a connection sends: the profile's (stored, else configured), or the literal one.
    static func tokenProvider(_ c: SignalKConnection) -> (@Sendable () async -> String?)? {
        if let access = c.access { return { await access.token() } }
        return c.token.map { t in { @Sendable () async -> String? in t } }
    }

    /// One attempt of ``open(_:reporter:)``.
    static func openOnce(_ c: SignalKConnection, reporter: SignalKHealthReporter?) async throws -> Opened {
        let provider = tokenProvider(c)
        let token = await provider?()
        let access = c.access
        let rest = SignalKREST(server: c.server, tokenProvider: provider)
        if token == nil {
            // No token: a secured server would give the hello and then silence (§3.2); ask REST
            // first, so the script learns at once that it needs a token.
            do { _ = try await rest.get("self") } catch let e as SignalKClientError {
                if case .unauthorized = e {
                    var info = LuaErrorInfo.signalk(e)
                    info.message += "; " + (access?.hint ?? "the server wants a token: pass token = … or use a [signalk.NAME] profile")
                    throw info
                }
                // Nothing listens there: say so once, rather than try the stream the same way again.
                if case .transport(let message) = e, message.contains("connection refused") { throw LuaErrorInfo.signalk(e) }
            } catch let e as LuaErrorInfo {
                throw e
            } catch {}
        }
        let stream = SignalKStream(configuration: c.configuration, tokenProvider: provider)
        let feed = SignalKFeed()
        let gate = SignalKConnectGate()
        let events = await stream.eventBatches()
        let where_ = Redaction.display(c.configuration.url)
        let pump = Task {
            // One hand-off per batch: the batch's changes go to every loop's buffer together.
            var changes: [SignalKChange] = []
            for await batch in events {
                for event in batch {
                    switch event {
                    case .delta(_, let c):
                        changes.append(contentsOf: c)
                    case .state(let s):
                        feed.dispatch(&changes)  // what came before the state change goes first
                        feed.setState(s)
                        reporter?.state(s)
                        switch s {
                        case .connected(let h): gate.resolve(.connected(h))
                        case .waitingToReconnect:
                            gate.resolve(.failed(code: "network", message: "cannot connect to \(where_) (refused, unreachable or no hello)"))
                        case .closed: gate.resolve(.failed(code: "closed", message: "the stream was closed"))
                        default: break
                        }
                    case .hello(let h): feed.setHello(h)
                    case .connectionError(let e):
                        feed.setError(e)
                        reporter?.error(e)
                    case .unauthorized:
                        // The token was refused at a reconnect: forget it and, with the opt-in, ask again.
                        if let access { Task { await access.refused(await access.token()) } }
                    default: break
                    }
                }
                if !changes.isEmpty {
                    feed.dispatch(&changes)
                    reporter?.received()
                }
            }
            feed.finishAll()
            gate.resolve(.failed(code: "closed", message: "the stream was closed"))
        }
        await stream.start()
        let seconds = c.timeout
        let timer = Task {
            try? await Task.sleep(for: Quantities.swiftDuration(seconds))
            gate.resolve(.failed(code: "timeout", message: "no hello from \(where_) within \(Quantities.formatDuration(seconds))"))
        }
        let outcome = await gate.wait()
        timer.cancel()
        switch outcome {
        case .connected:
            if !c.rows.isEmpty { await stream.subscribe(c.rows, context: c.rowsContext) }
            return Opened(stream: stream, rest: rest, feed: feed, pump: pump)
        case .failed(let code, var message):
            await stream.close()
            pump.cancel()
            // The WebSocket client cannot see why the connection failed: ask REST, whose client
            // can (a refused connection names the server and what to check, and fails at once),
            // and whether the token is the reason (signalk-server answers 401 at the upgrade and
            // on REST alike, §3.2).
            if code == "network" {
                do { _ = try await rest.get("self") } catch let e as SignalKClientError {
                    if case .unauthorized = e, token != nil {
                        await access?.refused(token)
                        var info = LuaErrorInfo.signalk(e)
                        if let access, access.policy == nil { info.message += "; " + access.hint }
                        throw info
                    }
                    if case .transport(let text) = e {
                        let reason = text.range(of: ": ").map { String(text[$0.upperBound...]) } ?? text
                        message = "cannot connect to \(where_): \(reason)"
                    }
                } catch {}
            }
            throw LuaErrorInfo(code: code, message: message, retryable: code != "cancelled", service: "signalk")
        }
    }
}
