import Foundation
import LookoutConfig
import Lua
import NightscoutKit

/// Access tokens (Admin Tools subjects) of a config profile's site, outside scripts
/// (`lookout nightscout token create|list`). The profile's credentials must be an admin's: the
/// API secret, or a token with the `admin` role.
public enum NightscoutTokenService {
    /// Creates a subject `name` with `roles` on profile `profile`'s site and returns it with its
    /// access token.
    /// - Throws: `NightscoutTokenServiceError` naming the problem (never a secret).
    public static func create(profile: String, name: String, roles: [String], config: HostConfig,
                              environment: [String: String] = ProcessInfo.processInfo.environment)
        async throws(NightscoutTokenServiceError) -> AuthorizationSubject
    {
        let client = try self.client(profile, config: config, environment: environment)
        do { return try await client.createSubject(name: name, roles: roles, notes: "made by lookout") } catch {
            throw .request(message(error))
        }
    }

    /// The subjects of profile `profile`'s site, with their tokens.
    public static func list(profile: String, config: HostConfig,
                            environment: [String: String] = ProcessInfo.processInfo.environment)
        async throws(NightscoutTokenServiceError) -> [AuthorizationSubject]
    {
        let client = try self.client(profile, config: config, environment: environment)
        do { return try await client.subjects() } catch { throw .request(message(error)) }
    }

    static func client(_ profile: String, config: HostConfig, environment: [String: String])
        throws(NightscoutTokenServiceError) -> NightscoutClient
    {
        do {
            let c = try NightscoutConnection.profile(profile, config: config, environment: environment)
            return NightscoutClient(configuration: c.configuration, timeout: c.timeout)
        } catch {
            throw .configuration((error as? LuaErrorInfo)?.message ?? String(describing: error))
        }
    }

    static func message(_ error: any Error) -> String {
        if case .unauthorized? = error as? NightscoutError {
            return "the site refused the profile's credentials for Admin Tools: use the API secret (secret_env) or an admin token"
        }
        return LuaErrorInfo.nightscout(error).message
    }
}

/// Why `NightscoutTokenService` failed.
public enum NightscoutTokenServiceError: Error, Equatable, CustomStringConvertible {
    /// The profile is missing or invalid.
    case configuration(String)
    /// The site answered with an error or could not be reached.
    case request(String)

    /// The message.
    public var description: String {
        switch self {
        case .configuration(let m), .request(let m): return m
        }
    }
}
