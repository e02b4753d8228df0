import Foundation
import LookoutWire
import LookoutConfig
import Lua
import NightscoutKit

/// How a script names a site: a config profile (`nightscout.client "home"`) or options
/// (`nightscout.connect{url=…, token="…"}`). Both give a `NightscoutConfiguration`.
///
/// Credentials, by the first present of: `token` (an access token: API v3, and v1), `jwt`, and
/// `secret` (the API secret: v1 only). A profile names them as `NAME_env` (an environment variable)
/// or `NAME_file`, chosen by whoever owns the config; `connect` takes only the literal value the
/// script already holds, never the name of a variable or a file (a script could otherwise send any
/// secret of the host to any address, or probe which variables exist).
public struct NightscoutConnection: Sendable {
    /// The site URL, API choice and credentials to build a client from.
    public var configuration: NightscoutConfiguration
    /// Per-request timeout in seconds (the profile's or `opts.timeout`; 30 by default).
    public var timeout: TimeInterval
    /// How messages and recorded side effects name the site: the profile name, or the URL's host.
    public var label: String
    /// Whose credentials these are, without them: the profile name, or a one-way fingerprint of the
    /// literal credential `connect` was given (`literal:token:0123…`). Uploads are queued per site and identity, so a queued document is
    /// always sent with the credentials of the client that queued it.
    public var identity: String
    /// Loop remote-command settings (profiles only; `connect` clients may send none).
    var remote = NightscoutRemoteSettings.none
    /// Which credential a profile uses and where it comes from, for messages that tell what to
    /// fix: `the secret in NS_SECRET`, `the token in file /etc/ns-token` (never the value).
    public var credentialSource: String?
    /// The unit people read glucose in (`units = "mmol"` or `"mg/dL"`); nil: the site's own.
    var units: GlucoseText.Unit?

    /// The credential names, in order of preference.
    static let credentialNames = ["token", "jwt", "secret"]
    /// Default per-request timeout.
    static let defaultTimeout: TimeInterval = 30

    static func credentials(_ name: String, _ value: String) -> NightscoutCredentials {
        switch name {
        case "token": return .accessToken(value)
        case "jwt": return .jwt(value)
        default: return .apiSecret(value)
        }
    }

    static func preferredAPI(_ text: String?) -> NightscoutAPIVersion? {
        guard let text else { return .v3 }
        return NightscoutAPIVersion(rawValue: text.lowercased())
    }

    /// From `[nightscout.NAME]` in the host config.
    public static func profile(_ name: String, config: HostConfig, environment: [String: String]) throws -> NightscoutConnection {
        guard let profile = config.profile(service: "nightscout", name: name) else {
            let known = config.profiles(service: "nightscout")
            throw LuaErrorInfo(code: "config", message: "no [nightscout.\(name)] profile in \(config.fileName)"
                + (known.isEmpty ? "" : " (profiles: \(known.joined(separator: ", ")))"), service: "nightscout")
        }
        do {
            guard let url = try profile.string("url") else { throw profile.error(key: "url", "the site's address is required") }
            var credentials = NightscoutCredentials.none
            var credentialSource: String?
            for secret in credentialNames {
                if let value = try config.secret(service: "nightscout", profile: name, name: secret, environment: environment) {
                    credentials = Self.credentials(secret, value.value)
                    switch value.source {
                    case .environment(let variable): credentialSource = "the \(secret) in \(variable)"
                    case .file(let path): credentialSource = "the \(secret) in file \(path)"
                    }
                    break
                }
            }
            guard let api = preferredAPI(try profile.string("api")) else { throw profile.error(key: "api", "expected \"v3\" or \"v1\"") }
            let configuration: NightscoutConfiguration
            do {
                configuration = try NightscoutConfiguration(site: url, credentials: credentials, preferredAPI: api,
                                                            allowsV1Fallback: try profile.bool("fallback") ?? true)
            } catch {
                throw profile.error(key: "url", "\(error)".replacingOccurrences(of: "Nightscout: invalid request: ", with: ""))
            }
            var units: GlucoseText.Unit?
            if let text = try profile.string("units") {
                guard let unit = GlucoseText.Unit(text: text) else { throw profile.error(key: "units", "expected \"mg/dL\" or \"mmol\"") }
                units = unit
            }
            return NightscoutConnection(configuration: configuration, timeout: try profile.duration("timeout") ?? defaultTimeout,
                                        label: name, identity: "profile:" + name,
                                        remote: try NightscoutRemoteSettings.read(profile, config: config, environment: environment),
                                        credentialSource: credentialSource, units: units)
        } catch let error as ConfigError {
            throw LuaErrorInfo(code: "config", message: error.description, service: "nightscout")
        }
    }

    /// The options `nightscout.connect` accepts.
    static let optionNames: Set<String> = Set(["url", "api", "fallback", "timeout", "units"] + credentialNames)

    /// From `nightscout.connect{…}` (argument `n`). Credentials are literal strings only.
    static func options(_ call: LuaCall, _ n: Int) throws -> NightscoutConnection {
        let opts = try call.options(n)
        try ScriptCredentialOptions.refuseReferences(opts, call: call, n: n, literals: credentialNames, profileCall: "nightscout.client")
        if let unknown = opts.keys.sorted().first(where: { !optionNames.contains($0) }) {
            throw call.argumentError(n, "unknown option '\(unknown)' (known: \(optionNames.sorted().joined(separator: ", ")))")
        }
        guard let url = opts["url"]?.text else { throw call.argumentError(n, "opts.url: the site's address is required") }
        var credentials = NightscoutCredentials.none
        for name in credentialNames {
            if let text = try ScriptCredentialOptions.literal(opts, name, call: call, n: n) {
                credentials = Self.credentials(name, text)
                break
            }
        }
        let identity = credentials == .none ? "anonymous" : "literal:" + credentials.fingerprint
        guard let api = preferredAPI(opts["api"]?.text), opts["api"] == nil || opts["api"]?.text != nil else {
            throw call.argumentError(n, "opts.api: expected \"v3\" or \"v1\"")
        }
        var fallback = true
        if let value = opts["fallback"] {
            guard case .bool(let b) = value else { throw call.argumentError(n, "opts.fallback: expected a boolean") }
            fallback = b
        }
        var timeout = defaultTimeout
        if let value = opts["timeout"] {
            timeout = try call.duration(value, argument: n, what: "opts.timeout", in: .timeout)
        }
        let configuration: NightscoutConfiguration
        do {
            configuration = try NightscoutConfiguration(site: url, credentials: credentials, preferredAPI: api, allowsV1Fallback: fallback)
        } catch {
            throw call.argumentError(n, "opts.url: expected http(s)://host[:port][/path]")
        }
        return NightscoutConnection(configuration: configuration, timeout: timeout, label: configuration.siteURL.host ?? url,
                                    identity: identity,
                                    units: try NightscoutGlucoseText.unit(opts["units"], call: call, argument: n, what: "opts.units"))
    }
}
