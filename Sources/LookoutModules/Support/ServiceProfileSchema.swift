import Foundation
import LookoutConfig
import Lua

/// The keys each service's profiles (`[nightscout.home]`, `[signalk.boat]`, `[garmin.me]`,
/// `[northlight.app]`) may hold and how their values are checked, so that `run`, `serve`, `test`
/// and `doctor` refuse a mistyped or malformed profile at start-up, with file, line and key, as
/// `[limits]` is refused, instead of when a script first uses it.
///
/// LookoutConfig knows no service: it checks only the shape of profiles (secrets by reference,
/// scalar values). What each key means is the clients', so the schema lives here, next to them.
public enum ServiceProfileSchema {
    /// One known key and its check (nil when the value is acceptable, else the message).
    struct Key: Sendable {
        let name: String
        let check: @Sendable (TOMLValue) -> String?
    }

    /// Settings and secret names of one service.
    struct Service: Sendable {
        let keys: [Key]
        /// Names usable as `NAME_env` / `NAME_file`.
        let secrets: [String]
    }

    static let services: [String: Service] = [
        "nightscout": Service(keys: [
            Key(name: "url", check: { url($0, schemes: ["http", "https"], example: "https://ns.example.org", tokenInQuery: true) }),
            Key(name: "api", check: { oneOf($0, ["v3", "v1"]) }),
            Key(name: "fallback", check: boolean),
            Key(name: "timeout", check: duration),
            // Glucose display unit (read by the glucose texts): "mmol" or "mg/dL".
            Key(name: "units", check: string),
            Key(name: "remote", check: { oneOf($0, ["dry-run", "live"]) }),
            Key(name: "remote_fallback", check: { oneOf($0, ["none", "v1"]) }),
            Key(name: "max_bolus", check: number), Key(name: "max_carbs", check: number),
            Key(name: "max_bolus_per_hour", check: number), Key(name: "max_carbs_per_hour", check: number),
            Key(name: "min_interval", check: duration), Key(name: "duplicate_window", check: duration),
            Key(name: "overrides", check: strings), Key(name: "toggles", check: strings),
        ], secrets: ["token", "jwt", "secret", "otp_url"]),
        "signalk": Service(keys: [
            Key(name: "url", check: { url($0, schemes: ["http", "https", "ws", "wss"], example: "http://boat.local:3000", tokenInQuery: false) }),
            Key(name: "subscribe", check: { oneOf($0, ["self", "all", "none"]) }),
            Key(name: "timeout", check: duration),
            Key(name: "access", check: SignalKAccessPolicy.check),
        ], secrets: ["token"]),
        "garmin": Service(keys: [
            Key(name: "garth_home", check: string), Key(name: "token_dir", check: string), Key(name: "domain", check: string),
            Key(name: "email", check: string),
            Key(name: "url", check: anyURL), Key(name: "sso_url", check: anyURL), Key(name: "api_url", check: anyURL),
            Key(name: "consumer_url", check: anyURL),
            Key(name: "refresh_buffer", check: duration), Key(name: "timeout", check: duration),
            Key(name: "flow", check: { oneOf($0, ["auto", "mobile", "widget"]) }),
        ], secrets: ["password"]),
        "northlight": Service(keys: [
            Key(name: "url", check: anyURL),
            Key(name: "timeout", check: duration), Key(name: "cache_ttl", check: duration),
            Key(name: "email", check: string), Key(name: "user_id", check: string),
        ], secrets: ["api_key"]),
    ]

    /// Checks every profile of the services above in `config`: unknown keys (with "did you mean"),
    /// unknown secret names, and each value's type and form.
    /// - Throws: the first problem, located at its line and key.
    public static func validate(_ config: HostConfig) throws(ConfigError) {
        for serviceName in services.keys.sorted() {
            let service = services[serviceName]!
            for name in config.profiles(service: serviceName) {
                guard let profile = config.profile(service: serviceName, name: name) else { continue }
                try validate(profile, service: service, config: config)
            }
        }
    }

    static func validate(_ profile: HostConfig.Profile, service: Service, config: HostConfig) throws(ConfigError) {
        let section = "[\(profile.service).\(ConfigWording.quotedKey(profile.name))]"
        for entry in profile.settings.entries {
            guard let key = service.keys.first(where: { $0.name == entry.key }) else {
                let known = service.keys.map(\.name) + service.secrets.flatMap { [$0 + "_env", $0 + "_file"] }
                throw profile.error(key: entry.key, "unknown key \(entry.key) in \(section)" + hint(entry.key, known: known))
                    .atKey(entry)
            }
            if let message = key.check(entry.value) { throw profile.error(key: entry.key, message) }
        }
        for secret in profile.secretNames where !service.secrets.contains(secret) {
            let raw = config.table.entry(atPath: [profile.service, profile.name, secret + "_env"])
                ?? config.table.entry(atPath: [profile.service, profile.name, secret + "_file"])
            let written = raw?.key ?? secret + "_env"
            let known = service.secrets.flatMap { [$0 + "_env", $0 + "_file"] }
            throw ConfigError(file: profile.fileName, line: raw?.line ?? profile.line, column: raw?.column,
                              keyPath: profile.keyPath(written),
                              message: "unknown secret \(written) in \(section)" + hint(written, known: known))
        }
    }

    /// `"; did you mean X? Known: …"` or `"; known: …"`.
    static func hint(_ name: String, known: [String]) -> String {
        let sorted = known.sorted()
        let guess = ConfigWording.suggestion(for: name, among: sorted).map { "; did you mean \($0)? Known: " } ?? "; known: "
        return guess + sorted.joined(separator: ", ")
    }

    // MARK: Value checks

    static func shown(_ value: TOMLValue) -> String {
        if case .string = value { return value.description }
        return value.kindDescription
    }

    static func string(_ value: TOMLValue) -> String? {
        value.stringValue == nil ? "expected a string, got \(shown(value))" : nil
    }

    static func boolean(_ value: TOMLValue) -> String? {
        value.boolValue == nil ? "expected true or false, got \(shown(value))" : nil
    }

    static func number(_ value: TOMLValue) -> String? {
        switch value {
        case .integer, .float: return nil
        default: return "expected a number, got \(shown(value))"
        }
    }

    static func duration(_ value: TOMLValue) -> String? {
        Quantities.duration(value) == nil ? "expected a duration such as \"30s\" or \"5m\", got \(shown(value))" : nil
    }

    static func strings(_ value: TOMLValue) -> String? {
        guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
            return "expected an array of strings, got \(shown(value))"
        }
        return nil
    }

    static func oneOf(_ value: TOMLValue, _ choices: [String]) -> String? {
        let list = choices.map { "\"\($0)\"" }.joined(separator: ", ")
        guard let text = value.stringValue else { return "expected one of \(list), got \(shown(value))" }
        return choices.contains(text) ? nil : "expected one of \(list), got \(shown(value))"
    }

    static func anyURL(_ value: TOMLValue) -> String? {
        url(value, schemes: ["http", "https"], example: "https://example.org", tokenInQuery: false)
    }

    /// A URL with one of `schemes` and a host. A URL without a scheme is refused with the example
    /// (it would otherwise become https and fail later); with `tokenInQuery`, a `?token=` (or
    /// `?secret=`) query is refused: credentials do not belong in the config file.
    static func url(_ value: TOMLValue, schemes: [String], example: String, tokenInQuery: Bool) -> String? {
        guard let text = value.stringValue else {
            return "expected the address as a string such as \"\(example)\", got \(shown(value))"
        }
        let schemeList = schemes.map { $0 + "://" }.joined(separator: " or ")
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              text.contains("://") else {
            return "expected a URL starting with \(schemeList), such as \"\(example)\"; got \(shownURL(text))"
        }
        guard schemes.contains(scheme) else {
            return "expected a URL starting with \(schemeList), such as \"\(example)\"; got a \(scheme):// URL"
        }
        guard let host = components.host, !host.isEmpty else {
            return "expected a URL with a host, such as \"\(example)\""
        }
        if tokenInQuery, let items = components.queryItems,
           let item = items.first(where: { ["token", "secret", "api_secret", "jwt"].contains($0.name.lowercased()) }) {
            let name = item.name.lowercased() == "api_secret" ? "secret" : item.name.lowercased()
            return "the URL carries a credential (?\(item.name)=…), which the config must not hold: remove it from the URL, "
                + "put it in an environment variable and name that here with \(name)_env = \"VAR\" (or \(name)_file)"
        }
        return nil
    }

    /// A URL as shown in a message: without user info or query (which may hold credentials).
    static func shownURL(_ text: String) -> String {
        var cut = text
        if let q = cut.firstIndex(where: { $0 == "?" || $0 == "#" }) { cut = String(cut[..<q]) }
        if let at = cut.lastIndex(of: "@") { cut = "‹redacted›@" + cut[cut.index(after: at)...] }
        return "\"\(cut)\""
    }
}

extension ConfigError {
    /// The error moved to the key of `entry` (an unknown key is reported where it is written).
    func atKey(_ entry: TOMLTable.Entry) -> ConfigError {
        var copy = self
        copy.line = entry.line
        copy.column = entry.column
        return copy
    }
}
