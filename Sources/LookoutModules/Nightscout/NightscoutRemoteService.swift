import Foundation
import LookoutConfig
import LookoutStore
import Lua
import NightscoutKit

/// Remote 2.0 commands of a config profile outside scripts (`lookout remote list PROFILE`).
public enum RemoteCommandService {
    /// The commands of profile `profile`'s site created since `since`, optionally only those in
    /// `state`, newest first.
    /// - Throws: `RemoteCommandServiceError` with a message naming the problem (no secret):
    ///   a missing or invalid profile, a site without Remote 2.0, or a failed request.
    public static func list(profile: String, config: HostConfig, since: Date, state: CommandState? = nil, count: Int = 200,
                            environment: [String: String] = ProcessInfo.processInfo.environment) async throws(RemoteCommandServiceError)
        -> [RemoteCommand]
    {
        let c: NightscoutConnection
        do { c = try NightscoutConnection.profile(profile, config: config, environment: environment) } catch {
            throw .configuration((error as? LuaErrorInfo)?.message ?? String(describing: error))
        }
        let queue = OutboxItem.siteKey(for: c.configuration) + "#" + c.identity
        let client = NightscoutClientPool.client(key: queue, configuration: c.configuration, timeout: c.timeout)
        do {
            return try await client.fetchRemoteCommands(since: since, state: state, count: count)
        } catch {
            throw .request(LuaErrorInfo.nightscout(error).message)
        }
    }
}

/// Why `RemoteCommandService.list` failed.
public enum RemoteCommandServiceError: Error, Equatable, CustomStringConvertible {
    /// The profile is missing or invalid.
    case configuration(String)
    /// The site answered with an error, has no Remote 2.0, or could not be reached.
    case request(String)

    /// The message.
    public var description: String {
        switch self {
        case .configuration(let m), .request(let m): return m
        }
    }
}
