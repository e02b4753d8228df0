import ArgumentParser
import Foundation
import LookoutConfig
import LookoutModules
import Lua
import SignalKKit

/// `lookout signalk token request|state PROFILE`: a device token for a `[signalk.NAME]` profile
/// through the server's access requests (contract §6.1). The token goes into
/// `<state>/tokens/signalk-profile-NAME_HOST_PORT.json` (mode 0600) and is never printed.
struct SignalKCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signalk",
        abstract: "Signal K: device tokens of [signalk.NAME] profiles.",
        subcommands: [SignalKTokenCommand.self])
}

/// `lookout signalk token`.
struct SignalKTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Request a device token from the server, or show the token's state (never the token).",
        subcommands: [SignalKTokenRequestCommand.self, SignalKTokenStateCommand.self])
}

/// The profile argument and its access.
struct SignalKProfileArgument: ParsableArguments {
    @Argument(help: "The config profile ([signalk.NAME] in config.toml).")
    var profile: String

    /// The profile's access (token store, opt-in) over the state's token directory.
    func access() throws -> SignalKProfileAccess {
        let env = try HostEnvironment.load()
        do {
            let c = try SignalKConnection.profile(
                profile, config: env.config, environment: ProcessInfo.processInfo.environment,
                tokens: URL(fileURLWithPath: env.paths.tokensDirectory, isDirectory: true))
            guard let access = c.access else { throw HostSetupError(description: "signalk: no token store") }
            return access
        } catch let e as LuaErrorInfo {
            throw HostSetupError(description: "signalk: \(e.message)")
        }
    }
}

/// `lookout signalk token request PROFILE`.
struct SignalKTokenRequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Ask the server for a device token and wait for the administrator's decision.",
        discussion: """
            Sends POST /signalk/v1/access/requests (or resumes the pending request), prints the \
            clientId the administrator sees, and polls until the request is approved or denied, or \
            --wait runs out (the request stays pending on the server). A denial stored earlier is \
            cleared: running this command is asking again.
            """)

    @OptionGroup var options: SignalKProfileArgument

    @Option(help: "What the administrator sees (default: the profile's access.description, else \"Lookout\").")
    var description: String?

    @Option(help: "readonly, readwrite or admin (default: the profile's access.permissions, else the administrator chooses).")
    var permissions: String?

    @Option(help: "How long to wait for the decision, e.g. 10m (at most 1h).")
    var wait: String = "10m"

    func run() async throws {
        let access = try options.access()
        let text = description ?? access.policy?.description ?? "Lookout"
        if let problem = SignalKAccessPolicy.checkDescription(text) { throw ValidationError("--description: \(problem)") }
        var perm = access.policy?.permissions
        if let permissions {
            guard let p = SignalKPermission(rawValue: permissions) else {
                throw ValidationError("--permissions: expected readonly, readwrite or admin, got '\(permissions)'")
            }
            perm = p
        }
        guard let seconds = Quantities.duration(.string(wait)), seconds >= 0, seconds <= 3600 else {
            throw ValidationError("--wait: expected a duration from 0 to 1h such as 10m, got '\(wait)'")
        }
        let clientId = try await access.store.clientId()
        say("requesting access to \(access.server.absoluteString) for [signalk.\(access.profile)] as \"\(text)\"")
        say("clientId \(clientId): approve it on the server (Security → Access Requests), or for the simulator: "
            + "lookout sim signalk approve \(clientId) --url \(access.server.absoluteString) --admin NAME:PASSWORD")
        let state: SignalKTokenState
        do {
            state = try await access.request(description: text, permissions: perm, wait: seconds, clearDenied: true)
        } catch {
            throw HostSetupError(description: "signalk: \(error)")
        }
        switch state {
        case .valid: say("approved: token stored in \(access.store.fileURL.path) (mode 0600)")
        case .denied: throw HostSetupError(description: "signalk: the access request was denied")
        default: throw HostSetupError(description: "signalk: still \(state.rawValue) after \(wait); run the command again to keep waiting")
        }
    }

    private func say(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }
}

/// `lookout signalk token state PROFILE`.
struct SignalKTokenStateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "Print the token's state: none, pending, valid, denied or expired.")

    @OptionGroup var options: SignalKProfileArgument

    func run() async throws {
        let state = await (try options.access()).state()
        FileHandleOutput.standardOutput.write(state.rawValue + "\n")
    }
}
