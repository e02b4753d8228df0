import ArgumentParser
import Foundation
import LookoutConfig
import LookoutModules
import NightscoutKit

/// `lookout nightscout token create|list`: access tokens for scripts, without Admin Tools.
struct NightscoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightscout",
        abstract: "A Nightscout site's access tokens (Admin Tools subjects).",
        subcommands: [Token.self])

    /// `lookout nightscout token …`.
    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "token",
            abstract: "Create or list access tokens; the profile's credentials must be an admin's (the API secret).",
            subcommands: [Create.self, List.self])
    }

    /// `lookout nightscout token create PROFILE NAME ROLE…`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a subject with roles and write its access token to a file (mode 0600) for a profile's token_file.",
            discussion: """
                Roles are Nightscout's: readable (read everything), careportal (create treatments), \
                devicestatus-upload, status-only, activity, denied, admin, or the site's own (with --site-role). The token is a secret: it is \
                written to --file (default: the state directory's tokens/nightscout-PROFILE-NAME.token), \
                never printed.

                Exit status: 0 created, 1 the site refused or failed, 2 usage or configuration error.
                """)

        @Argument(help: "The config profile ([nightscout.NAME] in config.toml) whose credentials are an admin's.")
        var profile: String

        @Argument(help: "The new subject's name, e.g. lookout-reader.")
        var name: String

        @Argument(help: "Its roles, e.g. readable.")
        var roles: [String]

        @Option(help: "Where to write the token (must not exist yet).")
        var file: String?

        @Flag(name: .customLong("site-role"), help: "Accept roles the site defines itself (not only Nightscout's own).")
        var siteRole = false

        /// Nightscout's own roles (lib/authorization/storage.js); a site may add its own.
        static let knownRoles = ["admin", "denied", "status-only", "readable", "careportal", "devicestatus-upload", "activity"]

        func validate() throws {
            if name.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("NAME must not be empty") }
            if roles.isEmpty { throw ValidationError("give at least one ROLE, e.g. readable") }
            // A mistyped role makes a subject that can do nothing, silently.
            for role in roles where !siteRole && !Self.knownRoles.contains(role) {
                let guess = ConfigWording.suggestion(for: role, among: Self.knownRoles).map { " (did you mean \($0)?)" } ?? ""
                throw ValidationError("unknown role '\(role)'\(guess); Nightscout's roles: \(Self.knownRoles.joined(separator: ", "))"
                                      + " (a role your site defines itself: add --site-role)")
            }
        }

        func run() async throws {
            let environment = try HostEnvironment.load()
            let path: String
            if let file {
                path = file
            } else {
                let dir: String
                do { dir = try environment.paths.createTokensDirectory() } catch {
                    throw HostSetupError(description: "cannot create the tokens directory: \(error)")
                }
                let safe = { (s: String) in String(s.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }) }
                path = dir + "/nightscout-\(safe(profile))-\(safe(name)).token"
            }
            if FileManager.default.fileExists(atPath: path) {
                throw HostSetupError(description: "\(path) exists already; give another --file")
            }
            let subject: AuthorizationSubject
            do throws(NightscoutTokenServiceError) {
                subject = try await NightscoutTokenService.create(profile: profile, name: name, roles: roles, config: environment.config)
            } catch {
                if case .configuration(let m) = error { throw HostSetupError(description: m) }
                FileHandle.standardError.write(Data("lookout: \(error.description)\n".utf8))
                throw ExitCode(1)
            }
            guard let token = subject.accessToken else {
                FileHandle.standardError.write(Data("lookout: the site listed the new subject without a token\n".utf8))
                throw ExitCode(1)
            }
            guard FileManager.default.createFile(atPath: path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else { throw HostSetupError(description: "cannot write \(path)") }
            print("created \(subject.name) (\(subject.roles.joined(separator: ", "))), id \(subject.id)")
            print("token \(AuthorizationSubject.masked(token)) written to \(path)")
            print("use it in a profile: token_file = \"\(path)\"")
        }
    }

    /// `lookout nightscout token list PROFILE`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List a site's subjects: name, roles, id, and the token's name part (never the secret part).")

        @Argument(help: "The config profile whose credentials are an admin's.")
        var profile: String

        func run() async throws {
            let environment = try HostEnvironment.load()
            let subjects: [AuthorizationSubject]
            do throws(NightscoutTokenServiceError) {
                subjects = try await NightscoutTokenService.list(profile: profile, config: environment.config)
            } catch {
                if case .configuration(let m) = error { throw HostSetupError(description: m) }
                FileHandle.standardError.write(Data("lookout: \(error.description)\n".utf8))
                throw ExitCode(1)
            }
            guard !subjects.isEmpty else {
                print("no subjects")
                return
            }
            let rows = subjects.map { [$0.name, $0.roles.joined(separator: ","), $0.id, $0.accessToken.map(AuthorizationSubject.masked) ?? "-"] }
            print(TextTable.render(["NAME", "ROLES", "ID", "TOKEN"], rows))
        }
    }
}
