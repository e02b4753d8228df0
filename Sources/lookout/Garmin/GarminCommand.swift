import ArgumentParser
import Foundation
import GarminKit
import LookoutModules
import Lua

/// `lookout garmin login|status|refresh|logout|profile [PROFILE]`: the account of a
/// `[garmin.NAME]` profile and its garth token directory (mirrors garth-swift's GarminCLI).
struct GarminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "garmin",
        abstract: "Log in to Garmin Connect and manage the saved tokens (garth's format).",
        discussion: """
            PROFILE names [garmin.PROFILE] in config.toml (default "me"): garth_home (the token \
            directory), domain, email, password_env or password_file, and url for the simulator. \
            Token values are never printed.
            """,
        subcommands: [GarminLoginCommand.self, GarminStatusCommand.self, GarminRefreshCommand.self, GarminLogoutCommand.self,
                      GarminProfileCommand.self])
}

/// The profile argument and the client it gives.
struct GarminProfileOptions: ParsableArguments {
    @Argument(help: "The config profile ([garmin.NAME] in config.toml).")
    var profile: String = "me"

    /// The profile's connection and a client over its token directory.
    func open() throws -> (GarminConnection, GarminClient) {
        let env = try HostEnvironment.load()
        do {
            let connection = try GarminConnection.profile(
                profile, config: env.config, paths: env.paths, environment: ProcessInfo.processInfo.environment)
            return (connection, try GarminClient(configuration: connection.configuration))
        } catch {
            throw HostSetupError(description: "garmin: \(error)")
        }
    }
}

/// Writes a line to standard output.
func garminSay(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }

/// Exit status 1 with the error's (secret-free) text.
func garminFail(_ error: any Error) -> ExitCode {
    FileHandle.standardError.write(Data("lookout: \(error)\n".utf8))
    return ExitCode(1)
}

/// `lookout garmin login`.
struct GarminLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login", abstract: "Log in (asks for the password without echo, and for the MFA code when needed).")

    @OptionGroup var options: GarminProfileOptions

    @Option(help: "Email (default: the profile's email, else asked).")
    var email: String?

    @Option(name: .customLong("password-env"), help: "Environment variable holding the password (default: the profile's password_env/password_file, else asked).")
    var passwordEnv: String?

    func run() async throws {
        let (connection, client) = try options.open()
        guard let email = email ?? connection.email ?? TerminalPrompt.line("Email: ") else {
            throw HostSetupError(description: "garmin login: no email")
        }
        let password: String
        if let passwordEnv {
            guard let p = ProcessInfo.processInfo.environment[passwordEnv], !p.isEmpty else {
                throw HostSetupError(description: "environment variable \(passwordEnv) is not set")
            }
            password = p
        } else if let p = try Self.profilePassword(connection) {
            password = p
        } else if let p = TerminalPrompt.secret("Password: ") {
            password = p
        } else {
            throw HostSetupError(description: "garmin login: no password")
        }
        do {
            _ = try await client.login(email: email, password: password) {
                guard let code = TerminalPrompt.line("MFA code: ") else { throw GarminError.mfaRequired }
                return code
            }
        } catch {
            throw garminFail(error)
        }
        let status = await client.status()
        garminSay("logged in as \(email) (\(connection.configuration.domain))" + (status.mfa ? ", MFA" : ""))
        if let dir = connection.configuration.tokenDirectory { garminSay("tokens saved in \(dir.path)") }
        if let e = status.oauth2ExpiresAt { garminSay("OAuth2 token expires \(GarminStatusCommand.format(e))") }
    }

    static func profilePassword(_ c: GarminConnection) throws -> String? {
        do { return try c.password() } catch { throw HostSetupError(description: "garmin: \(error)") }
    }
}

/// `lookout garmin status`.
struct GarminStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show whether tokens are saved and when they expire.")

    @OptionGroup var options: GarminProfileOptions

    func run() async throws {
        let (connection, client) = try options.open()
        let s = await client.status()
        garminSay("profile: \(connection.label)")
        garminSay("token directory: \(connection.configuration.tokenDirectory?.path ?? "(none)")")
        guard s.loggedIn else {
            garminSay("not logged in (run: lookout garmin login \(connection.label))")
            throw ExitCode(1)
        }
        garminSay("logged in: yes (\(s.domain ?? connection.configuration.domain))" + (s.mfa ? ", MFA" : ""))
        if let m = s.mfaExpiresAt { garminSay("MFA token expires \(Self.format(m))") }
        if let e = s.oauth2ExpiresAt {
            garminSay("OAuth2 token expires \(Self.format(e))" + (s.needsRefresh ? " (refreshed automatically on next use)" : ""))
        } else {
            garminSay("OAuth2 token: none (made on next use)")
        }
    }

    static func format(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: d)
    }
}

/// `lookout garmin refresh`.
struct GarminRefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "refresh", abstract: "Exchange the OAuth1 token for a new OAuth2 token now.")

    @OptionGroup var options: GarminProfileOptions

    func run() async throws {
        let (_, client) = try options.open()
        do {
            let token = try await client.refresh()
            garminSay("OAuth2 token refreshed; expires \(GarminStatusCommand.format(token.expiresAtDate))")
        } catch {
            throw garminFail(error)
        }
    }
}

/// `lookout garmin logout`.
struct GarminLogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "Delete the saved tokens.")

    @OptionGroup var options: GarminProfileOptions

    func run() async throws {
        let (connection, client) = try options.open()
        do { try await client.logout() } catch { throw garminFail(error) }
        garminSay("logged out; tokens removed from \(connection.configuration.tokenDirectory?.path ?? "(none)")")
    }
}

/// `lookout garmin profile`.
struct GarminProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "profile", abstract: "Fetch the account's social profile (checks the tokens work).")

    @OptionGroup var options: GarminProfileOptions

    func run() async throws {
        let (_, client) = try options.open()
        do {
            guard let p = try await client.profile() else { throw GarminError.decoding("empty profile") }
            garminSay("display name: \(p.displayName ?? "-")")
            garminSay("user name: \(p.userName ?? "-")")
            garminSay("full name: \(p.fullName ?? "-")")
            if let id = p.profileId { garminSay("profile id: \(id)") }
            if let l = p.location { garminSay("location: \(l)") }
        } catch {
            throw garminFail(error)
        }
    }
}
