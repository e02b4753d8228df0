import ArgumentParser
import Foundation
import LookoutAutomation
import LookoutStore
import NightscoutKit

/// `lookout remote release ID [--yes]`: a person gives one sent command's budget back.
///
/// A sent Loop remote command counts against its site's hourly budget whatever Loop, the
/// treatments or a Remote 2.0 state later say (a script could write that evidence itself). When
/// the person at the machine knows a command was not enacted, this releases its reservation: it
/// shows the command, asks on the terminal, and appends a `released` entry to the audit log.
/// Without a terminal on stdin it refuses unless `--yes` is given (scripts cannot run it: they
/// have no process access).
struct RemoteReleaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "Give one sent remote command's budget back (asks first; audited).",
        discussion: """
            ID is the ticket shown by `lookout audit` (or a unique prefix of at least 8 characters), or a Remote 2.0 id \
            shown by `lookout remote list`. The command then no longer counts against the site's hourly totals or \
            duplicate window (it still counts for the minimum interval). Exit status: 0 released, 1 declined, \
            2 not found, already released, or no terminal to ask on without --yes.
            """)

    @Argument(help: "The ticket (lookout audit) or Remote 2.0 id (lookout remote list).")
    var id: String

    @Flag(help: "Release without asking (for a person at a non-terminal stdin; required when stdin is not a terminal).")
    var yes = false

    func run() async throws {
        let environment = try HostEnvironment.load()
        let store: any StateBackend
        do { store = try StateBackends.shared(paths: environment.paths) } catch { throw HostSetupError(description: error.description) }
        let command: StateStore.ReservedCommand
        do { command = try await store.reservedCommand(id) } catch let error as ReleaseError {
            throw HostSetupError(description: error.description)
        }
        let time = ISO8601DateFormatter().string(from: command.authorizedAt)
        Self.say("\(command.command) on \(command.site) by \(command.source.isEmpty ? "?" : command.source) at \(time)\n"
            + "ticket \(command.ticket.uuidString), \(Self.statusText(command.status))\n")
        if !yes {
            guard isatty(0) == 1 else {
                throw HostSetupError(description: "not released: stdin is not a terminal to confirm on (pass --yes to release anyway)")
            }
            Self.say("Release it, so it no longer counts against the hourly budget? [y/N] ")
            let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else {
                Self.say("not released\n")
                throw ExitCode(1)
            }
        }
        let user = ProcessInfo.processInfo.environment["USER"].map { " (\($0))" } ?? ""
        do {
            _ = try await store.releaseReservation(ticket: command.ticket, by: "lookout remote release" + user + (yes ? " --yes" : ""), now: Date())
        } catch let error as ReleaseError {
            throw HostSetupError(description: error.description)
        } catch {
            throw HostSetupError(description: String(describing: error))
        }
        Self.say("released \(command.ticket.uuidString) (audited)\n")
    }

    /// Writes to stdout at once (unbuffered, so the question shows before the answer is read).
    static func say(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

    static func statusText(_ status: RemoteCommandRecord.Status) -> String {
        switch status {
        case .inFlight: return "reserved (no send reported yet)"
        case .sent: return "sent: counts against the hourly budget"
        case .failed: return "never sent: holds no budget"
        case .released: return "already released"
        }
    }
}
