import ArgumentParser
import Foundation
import LookoutModules
import NightscoutKit

/// `lookout remote list PROFILE`: the site's Loop Remote 2.0 commands and where they stand;
/// `lookout remote release ID`: give a sent command's budget back (`RemoteReleaseCommand`).
struct RemoteCommandsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Loop remote commands: Remote 2.0 commands stored on a site; releasing a sent command's budget.",
        subcommands: [List.self, RemoteReleaseCommand.self])

    /// `lookout remote list PROFILE [--since 24h] [--state pending]`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List a site's Remote 2.0 commands (newest first): time, state, command, id, Loop's message.",
            discussion: "Exit status: 0 listed, 1 the site failed or has no Remote 2.0, 2 usage or configuration error.")

        @Argument(help: "The config profile ([nightscout.NAME] in config.toml).")
        var profile: String

        @Option(help: ArgumentHelp("Only commands created since: ISO time or a duration back (default 24h).", valueName: "time"))
        var since = "24h"

        @Option(help: "Only this state: pending, in_progress, success, error.")
        var state: String?

        func validate() throws {
            if SyncCommand.time(since, now: Date()) == nil {
                throw ValidationError("--since: expected an ISO date or time or a duration back such as 24h, got '\(since)'")
            }
            if let state, Self.state(state) == nil {
                throw ValidationError("--state: expected pending, in_progress, success or error, got '\(state)'")
            }
        }

        static func state(_ text: String) -> CommandState? {
            ["pending": .pending, "in_progress": .inProgress, "success": .success, "error": .error][text]
                ?? CommandState(rawValue: text)
        }

        func run() async throws {
            let environment = try HostEnvironment.load()
            let commands: [RemoteCommand]
            do throws(RemoteCommandServiceError) {
                commands = try await RemoteCommandService.list(
                    profile: profile, config: environment.config, since: SyncCommand.time(since, now: Date())!,
                    state: state.flatMap(Self.state))
            } catch {
                if case .configuration(let m) = error { throw HostSetupError(description: m) }
                FileHandle.standardError.write(Data("lookout: \(error.description)\n".utf8))
                throw ExitCode(1)
            }
            guard !commands.isEmpty else {
                print("no remote commands")
                return
            }
            let time = ISO8601DateFormatter()
            for c in commands {
                let state = c.status.state.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)
                var line = "\(time.string(from: c.createdDate))  \(state)\(AuditCommand(c.action.loopCommand))  \(c.id ?? "?")"
                if !c.status.message.isEmpty { line += "\n    \(c.status.message)" }
                print(line)
            }
        }
    }
}
