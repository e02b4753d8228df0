import ArgumentParser
import Foundation
import LookoutAutomation
import LookoutConfig

/// `lookout`: scripting host for Nightscout, Signal K, Northlight and Garmin Connect.
@main
struct Lookout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookout",
        abstract: "Script Nightscout, Signal K, Northlight and Garmin Connect with Lua.",
        discussion: """
            With no command on a terminal, starts the interactive REPL. -v (--verbose) before
            the command holds for every command: debug logs and each HTTP exchange on standard error.
            Configuration: ~/.config/lookout/config.toml; state: ~/.local/state/lookout
            ($XDG_CONFIG_HOME/lookout and $XDG_STATE_HOME/lookout when set; LOOKOUT_HOME
            overrides both). The system service of the Debian package (lookout.service) uses
            /etc/lookout/config.toml and /var/lib/lookout: run commands on its state as its user,
            sudo -u lookout XDG_CONFIG_HOME=/etc XDG_STATE_HOME=/var/lib lookout ack ID.
            """,
        version: LookoutVersion.current,
        subcommands: [
            RunCommand.self,
            ReplCommand.self,
            StubsCommand.self,
            SimCommand.self,
            NightscoutCommand.self,
            OutboxCommand.self,
            AuditLogCommand.self,
            StateCommand.self,
            ProfilesCommand.self,
            RemoteCommandsCommand.self,
            SyncCommand.self,
            DiscoverCommand.self,
            DoctorCommand.self,
            DemoCommand.self,
            GarminCommand.self,
            SignalKCommand.self,
            TestCommand.self,
            AckCommand.self,
            FeedbackCommand.self,
            BugCommand.self,
            ServeCommand.self,
            StatusCommand.self,
            WebCommand.self,
        ])

    /// Exit statuses: 0 ok, 1 script error, 2 usage or configuration error.
    static func main() async {
        let (arguments, verbose) = GlobalOptions.split(Array(CommandLine.arguments.dropFirst()))
        if verbose { GlobalOptions.requestVerbose() }
        // Answered before ArgumentParser builds the command tree (reflection over every command's
        // options: most of the 9 ms `--version` took on a release build).
        if arguments == ["--version"] {
            print(LookoutVersion.current)
            return
        }
        do {
            var command = try parseAsRoot(arguments.isEmpty ? ["repl"] : arguments)
            // For the test that checks every command README and the ready scripts show: parse
            // (options, values, validation) and say which command, without running it.
            if ProcessInfo.processInfo.environment["LOOKOUT_PARSE_ONLY"] == "1" {
                print("parsed: \(type(of: command).configuration.commandName ?? "lookout")")
                return
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let error as HostSetupError {
            FileHandle.standardError.write(Data("lookout: \(error.description)\n".utf8))
            Foundation.exit(2)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                self.exit(withError: error)  // --help, --version
            }
            var message = fullMessage(for: error)
            if let hint = DidYouMean.hint(arguments: arguments, message: message) {
                message += "\n" + hint
            }
            FileHandle.standardError.write(Data((message + "\n").utf8))
            Foundation.exit(2)
        }
    }
}
