import Foundation
import GarminKit
import LookoutConfig
import Lua

/// A `[garmin.NAME]` profile: where the tokens live, the domain, optional transport overrides
/// (for the simulator), and the optional login credentials (`email`, `password_env` /
/// `password_file`; the password is read only when logging in).
///
/// ```toml
/// [garmin.me]
/// garth_home = "~/.garth"        # token directory (garth format); default: GARTH_HOME, else <state>/garmin/me
/// domain = "garmin.com"          # or "garmin.cn"
/// email = "me@example.com"
/// password_env = "GARMIN_PASSWORD"
/// # url = "http://127.0.0.1:8089"  # one server for every host (lookout sim garmin)
/// ```
public struct GarminConnection: Sendable {
    /// The client configuration (token directory, domain, overrides).
    public var configuration: GarminConfiguration
    /// The profile name.
    public var label: String
    /// The profile's `email`, if any.
    public var email: String?
    /// Reads the password (config secret), or nil when none is configured.
    public var password: @Sendable () throws -> String?

    /// Known profile keys.
    static let keys: Set<String> = [
        "garth_home", "token_dir", "domain", "email", "password_env", "password_file", "url", "sso_url", "api_url", "consumer_url",
        "refresh_buffer", "timeout", "flow",
    ]

    /// Reads `[garmin.NAME]`; throws a `LuaErrorInfo` with code `config` naming the problem.
    public static func profile(_ name: String, config: HostConfig, paths: LookoutPaths, environment: [String: String]) throws
        -> GarminConnection
    {
        guard let profile = config.profile(service: "garmin", name: name) else {
            let known = config.profiles(service: "garmin")
            throw LuaErrorInfo(
                code: "config",
                message: "no [garmin.\(name)] profile in \(config.fileName)" + (known.isEmpty ? "" : " (profiles: \(known.joined(separator: ", ")))"),
                service: "garmin")
        }
        do {
            func url(_ key: String) throws -> URL? {
                guard let text = try profile.string(key) else { return nil }
                guard let u = URL(string: text), u.scheme != nil, u.host != nil else { throw profile.error(key: key, "expected a URL") }
                return u
            }
            var dir: URL
            if let home = try profile.string("garth_home") ?? profile.string("token_dir") {
                dir = URL(fileURLWithPath: LookoutPaths.expandTilde(home, environment: environment), isDirectory: true)
            } else if let home = environment["GARTH_HOME"], !home.isEmpty {
                dir = URL(fileURLWithPath: LookoutPaths.expandTilde(home, environment: environment), isDirectory: true)
            } else {
                dir = URL(fileURLWithPath: paths.stateDirectory, isDirectory: true).appendingPathComponent("garmin/\(name)")
            }
            let base = try url("url")
            let flow: GarminSSOFlow
            switch try profile.string("flow") ?? "auto" {
            case "auto": flow = .mobileThenWidget
            case "mobile": flow = .mobile
            case "widget": flow = .widget
            default: throw profile.error(key: "flow", "expected \"auto\", \"mobile\" or \"widget\"")
            }
            let configuration: GarminConfiguration
            do {
                let api = try url("api_url") ?? base
                configuration = try GarminConfiguration(
                    domain: try profile.string("domain") ?? "garmin.com", ssoBaseURL: try url("sso_url") ?? base, connectAPIBaseURL: api,
                    oauthConsumerURL: try url("consumer_url") ?? base.map { $0.appendingPathComponent("oauth_consumer.json") }
                        ?? URL(string: "https://thegarth.s3.amazonaws.com/oauth_consumer.json")!,
                    timeout: try profile.duration("timeout") ?? 10, refreshBuffer: try profile.duration("refresh_buffer") ?? 60,
                    tokenDirectory: dir, ssoFlow: flow)
            } catch let e as GarminError {
                throw profile.error(key: "domain", "\(e)".replacingOccurrences(of: "Garmin: invalid configuration: ", with: ""))
            }
            let env = environment
            return GarminConnection(
                configuration: configuration, label: name, email: try profile.string("email"),
                password: { try config.secret(service: "garmin", profile: name, name: "password", environment: env)?.value })
        } catch let error as ConfigError {
            throw LuaErrorInfo(code: "config", message: error.description, service: "garmin")
        }
    }
}
