import Foundation
import LookoutWire
import LookoutConfig
import Lua
import SignalKKit

/// How a script names a Signal K server: a config profile (`signalk.connect "boat"` reads
/// `[signalk.boat]`) or options (`signalk.connect{url=…}`). Both give a stream configuration,
/// the REST root, the token (never visible to scripts) and the first subscriptions.
public struct SignalKConnection: Sendable {
    /// The delta stream's URL, subscribe mode and settings.
    public var configuration: SignalKStreamConfiguration
    /// `http(s)://host:port` (REST and discovery).
    public var server: URL
    /// The access token sent to the server; `nil` to connect without one.
    public var token: String?
    /// How messages, health and recorded side effects name the server: the profile name, or the redacted URL.
    public var label: String
    /// Subscriptions sent once connected.
    var rows: [SignalKSubscription] = []
    var rowsContext = SignalKContext.selfAlias
    /// How long `connect` waits for the hello.
    public var timeout: Double
    /// The profile's token store and access requests (profiles only; `connect{url=…}` has none).
    public var access: SignalKProfileAccess?

    static let defaultTimeout: Double = 10
    /// Capacity of the stream's event buffer towards the boat's pump (oldest dropped).
    static let streamBuffer = 8192

    /// The connection for `url` (ws, wss, http or https); the stream path defaults to
    /// `/signalk/v1/stream`.
    static func make(url text: String, token: String?, label: String, mode: SignalKSubscribeMode, timeout: Double)
        throws -> SignalKConnection
    {
        guard let url = URL(string: text) else { throw SignalKClientError.invalidURL(text) }
        var configuration: SignalKStreamConfiguration
        configuration = try SignalKStreamConfiguration(url: url)
        configuration.subscribe = mode
        // Meta deltas (units, display names, zones) before the first value of each path, for the
        // store (`boat:get` leaves, `boat:meta`) and the loops that ask for them (`meta = true`).
        configuration.sendMeta = true
        configuration.bufferSize = streamBuffer
        // A begun message must finish within the connection's timeout (and at most 10 s).
        configuration.messageTimeout = Quantities.swiftDuration(min(max(timeout, 0.1), defaultTimeout))
        guard var c = URLComponents(url: configuration.url, resolvingAgainstBaseURL: true) else { throw SignalKClientError.invalidURL(text) }
        c.scheme = c.scheme == "wss" ? "https" : "http"
        c.path = ""
        c.query = nil
        guard let server = c.url else { throw SignalKClientError.invalidURL(text) }
        return SignalKConnection(configuration: configuration, server: server, token: token, label: label, timeout: timeout)
    }

    static func mode(_ text: String) -> SignalKSubscribeMode? { SignalKSubscribeMode(rawValue: text) }

    /// From `[signalk.NAME]`: `url`, optional `token_env`/`token_file`, `subscribe` ("self",
    /// "all" or "none"; default "self"), `timeout` (for the first hello) and `access` (the opt-in
    /// to access requests, ``SignalKAccessPolicy``). With `tokens` (the state's token directory)
    /// the connection has a ``SignalKProfileAccess``: the token stored for the profile is used
    /// before the configured one.
    public static func profile(_ name: String, config: HostConfig, environment: [String: String], tokens: URL? = nil) throws
        -> SignalKConnection
    {
        guard let profile = config.profile(service: "signalk", name: name) else {
            let known = config.profiles(service: "signalk")
            throw LuaErrorInfo(code: "config", message: "no [signalk.\(name)] profile in \(config.fileName)"
                + (known.isEmpty ? "" : " (profiles: \(known.joined(separator: ", ")))"), service: "signalk")
        }
        do {
            guard let url = try profile.string("url") else { throw profile.error(key: "url", "the server's address is required") }
            let token = try config.secret(service: "signalk", profile: name, name: "token", environment: environment)?.value
            let modeText = try profile.string("subscribe") ?? "self"
            guard let mode = mode(modeText) else { throw profile.error(key: "subscribe", "expected \"self\", \"all\" or \"none\"") }
            let timeout = try profile.duration("timeout") ?? defaultTimeout
            let policy = try SignalKAccessPolicy.parse(profile)
            var c: SignalKConnection
            do {
                c = try make(url: url, token: token, label: name, mode: mode, timeout: timeout)
            } catch {
                throw profile.error(key: "url", String(describing: error))
            }
            if let tokens {
                c.access = SignalKProfileAccess.shared(profile: name, server: c.server, directory: tokens, policy: policy,
                                                       configuredToken: token)
            }
            return c
        } catch let error as ConfigError {
            throw LuaErrorInfo(code: "config", message: error.description, service: "signalk")
        }
    }

    static let optionNames: Set<String> = ["url", "token", "subscribe", "timeout"]

    /// From `signalk.connect{…}` (argument `n`). `subscribe` is a mode ("self", "all", "none") or
    /// a list of subscriptions (then the mode is "none"). The token is a literal string only: a
    /// script never names an environment variable or a file (profiles do).
    static func options(_ call: LuaCall, _ n: Int) throws -> SignalKConnection {
        let opts = try call.options(n)
        try ScriptCredentialOptions.refuseReferences(opts, call: call, n: n, literals: ["token"], profileCall: "signalk.connect")
        if let unknown = opts.keys.sorted().first(where: { !optionNames.contains($0) }) {
            throw call.argumentError(n, "unknown option '\(unknown)' (known: \(optionNames.sorted().joined(separator: ", ")))")
        }
        guard let url = opts["url"]?.text else { throw call.argumentError(n, "opts.url: the server's address is required") }
        let token = try ScriptCredentialOptions.literal(opts, "token", call: call, n: n)
        var mode = SignalKSubscribeMode.ownVessel
        var rows: [SignalKSubscription] = [], context = SignalKContext.selfAlias
        switch opts["subscribe"] {
        case nil: break
        case .string(let s)?:
            guard let m = s.text.flatMap(Self.mode) else { throw call.argumentError(n, "opts.subscribe: expected \"self\", \"all\", \"none\" or a list of subscriptions") }
            mode = m
        case let value?:
            (rows, context) = try SignalKRows.parse(value, call: call, n: n, name: "opts.subscribe")
            mode = .none
        }
        var timeout = defaultTimeout
        if let value = opts["timeout"] {
            timeout = try call.duration(value, argument: n, what: "opts.timeout", in: .timeout)
        }
        do {
            var c = try make(url: url, token: token, label: Redaction.displayText(url), mode: mode, timeout: timeout)
            c.rows = rows
            c.rowsContext = context
            return c
        } catch {
            throw call.argumentError(n, "opts.url: \(String(describing: error))")
        }
    }
}

/// Subscription rows as scripts write them: `{ {path="navigation.*", period=1000,
/// policy="instant", minPeriod=200, format="delta"}, "environment.depth.*", context="vessels.*" }`.
enum SignalKRows {
    static let rowKeys: Set<String> = ["path", "period", "minPeriod", "policy", "format"]

    static func parse(_ value: LuaValue, call: LuaCall, n: Int, name: String) throws(LuaRaise) -> ([SignalKSubscription], String) {
        var items: [(Int, LuaValue)] = []
        var context = SignalKContext.selfAlias
        switch value {
        case .array(let a):
            items = a.enumerated().map { ($0.offset + 1, $0.element) }
        case .object(let o) where o["path"] != nil:
            items = [(1, value)]
        case .object(let o):
            for (key, item) in o {
                if key == "context" {
                    guard let c = item.text else { throw call.argumentError(n, "\(name).context: expected a string") }
                    context = c
                } else if let i = Int(key) {
                    items.append((i, item))
                } else {
                    throw call.argumentError(n, "\(name): unknown key '\(key)' (a list of subscriptions and context)")
                }
            }
            items.sort { $0.0 < $1.0 }
        default:
            throw call.argumentError(n, "\(name): expected a list of subscriptions")
        }
        guard !items.isEmpty else { throw call.argumentError(n, "\(name): expected at least one subscription") }
        var rows: [SignalKSubscription] = []
        for (i, item) in items {
            let at = "\(name)[\(i)]"
            if let path = item.text {
                rows.append(SignalKSubscription(path: path))
                continue
            }
            guard case .object(let r) = item else { throw call.argumentError(n, "\(at): expected a path or a table with path") }
            if let unknown = r.keys.sorted().first(where: { !rowKeys.contains($0) }) {
                throw call.argumentError(n, "\(at): unknown key '\(unknown)' (known: \(rowKeys.sorted().joined(separator: ", ")))")
            }
            guard let path = r["path"]?.text else { throw call.argumentError(n, "\(at).path: expected a string") }
            var row = SignalKSubscription(path: path)
            if let p = r["period"] {
                guard let ms = p.int, ms > 0 else { throw call.argumentError(n, "\(at).period: expected milliseconds > 0") }
                row.period = .milliseconds(ms)
            }
            if let p = r["minPeriod"] {
                guard let ms = p.int, ms >= 0 else { throw call.argumentError(n, "\(at).minPeriod: expected milliseconds ≥ 0") }
                row.minPeriod = .milliseconds(ms)
            }
            if let p = r["policy"] {
                guard let policy = p.text.flatMap(SignalKSubscriptionPolicy.init(rawValue:)) else {
                    throw call.argumentError(n, "\(at).policy: expected \"instant\" or \"fixed\"")
                }
                row.policy = policy
            }
            if let f = r["format"] {
                guard let format = f.text.flatMap(SignalKSubscriptionFormat.init(rawValue:)) else {
                    throw call.argumentError(n, "\(at).format: expected \"delta\" or \"full\"")
                }
                row.format = format
            }
            rows.append(row)
        }
        return (rows, context)
    }
}
