import Foundation
import LookoutWire
import LookoutConfig
import Lua
import NorthlightKit

/// A Northlight project as a config profile names it:
///
/// ```toml
/// [northlight.app]
/// api_key_env = "NORTHLIGHT_API_KEY"     # or api_key_file = "~/.config/lookout/northlight.key"
/// url = "https://northlight.app/api/v1"  # optional (the default)
/// email = "me@example.com"               # optional: sent with submissions
/// user_id = "skipper-42"                 # optional: votes are cast as this user
/// cache_ttl = "5m"                        # optional: board and roadmap cache (default 5 min)
/// ```
///
/// With no name, the profile `default` is used, or the only `[northlight.*]` profile.
public struct NorthlightConnection: Sendable {
    /// The project and client identity (holds the key; its description does not show it).
    public var configuration: NorthlightConfiguration
    /// The profile name.
    public var profile: String
    /// The e-mail set once for submissions, if configured.
    public var email: String?
    /// The identifier votes are cast with, if configured.
    public var userID: String?

    /// The outbox queue of this profile: `northlight:<url>#profile:<name>` (no key).
    public var queue: String { "northlight:" + configuration.baseURL.absoluteString + "#profile:" + profile }

    /// The service's section name.
    static let service = "northlight"

    /// The profile `name`, or the default one when nil.
    /// - Throws: `LuaErrorInfo` with code `config` naming what is missing or wrong (never a key).
    public static func profile(_ name: String?, config: HostConfig, appVersion: String,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws -> NorthlightConnection {
        let known = config.profiles(service: service)
        let chosen: String
        if let name {
            chosen = name
        } else if known.contains("default") {
            chosen = "default"
        } else if known.count == 1 {
            chosen = known[0]
        } else {
            throw LuaErrorInfo(code: "config", message: known.isEmpty
                ? "no [northlight.NAME] profile in \(config.fileName)"
                : "several Northlight profiles (\(known.joined(separator: ", "))): name one, or add [northlight.default]",
                service: service)
        }
        guard let profile = config.profile(service: service, name: chosen) else {
            throw LuaErrorInfo(code: "config", message: "no [northlight.\(chosen)] profile in \(config.fileName)"
                + (known.isEmpty ? "" : " (profiles: \(known.joined(separator: ", ")))"), service: service)
        }
        do {
            guard let key = try config.secret(service: service, profile: chosen, name: "api_key", environment: environment) else {
                throw profile.error(key: "api_key_env", "the project's API key is required (api_key_env or api_key_file)")
            }
            let url = try profile.string("url") ?? NorthlightConfiguration.defaultBaseURL.absoluteString
            guard let parsed = URL(string: url) else { throw profile.error(key: "url", "not a URL") }
            let timeout = try profile.duration("timeout") ?? 30
            let cacheTTL = try profile.duration("cache_ttl") ?? 300
            let configuration: NorthlightConfiguration
            do {
                configuration = try NorthlightConfiguration(apiKey: key.value, baseURL: parsed, appVersion: appVersion,
                                                            timeout: timeout, cacheTTL: cacheTTL)
            } catch .invalidAPIKey {
                throw profile.error(key: "api_key_env", "the API key is empty or has characters a header cannot carry")
            } catch {
                throw profile.error(key: "url", error.description.replacingOccurrences(of: "Northlight: invalid input: baseURL: ", with: ""))
            }
            let email = try profile.string("email")
            if let email, !NorthlightValidation.isEmail(email) { throw profile.error(key: "email", "not a valid address") }
            let userID = try profile.string("user_id")
            return NorthlightConnection(configuration: configuration, profile: chosen, email: email, userID: userID)
        } catch let error as ConfigError {
            throw LuaErrorInfo(code: "config", message: error.description, service: service)
        }
    }

    /// A client for this profile, with the user's e-mail and identifier set.
    public func client() async throws -> NorthlightClient {
        let client = NorthlightClients.client(key: queue, configuration: configuration)
        try await client.setUserEmail(email)
        try await client.setUserIdentifier(userID)
        return client
    }
}

/// One `NorthlightClient` per profile and configuration for the whole process (so the board
/// cache is shared by the scripts of a `lookout serve`).
enum NorthlightClients {
    private static let clients = Locked<[String: NorthlightClient]>([:])

    /// The shared client for `key` (a profile's `queue`), made anew when none exists or its configuration changed.
    public static func client(key: String, configuration: NorthlightConfiguration) -> NorthlightClient {
        clients.withLock { pool in
            if let existing = pool[key], existing.configuration == configuration { return existing }
            let client = NorthlightClient(configuration: configuration)
            pool[key] = client
            return client
        }
    }
}
