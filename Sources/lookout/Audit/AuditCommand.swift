import ArgumentParser
import Foundation
import LookoutStore
import NightscoutKit

/// `lookout audit`: the append-only log of Loop remote commands.
struct AuditLogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show the audit log of Loop remote commands (attempts, refusals and why, sends, outcomes; Remote 2.0 sends show their command id and final state).")

    @Option(help: "Only this site (as shown after \"on\": the normalised site URL).")
    var site: String?

    @Option(help: "How many of the newest entries to show.")
    var limit = 50

    func run() async throws {
        let environment = try HostEnvironment.load()
        let store: any StateBackend
        do { store = try StateBackends.shared(paths: environment.paths) } catch { throw HostSetupError(description: error.description) }
        let rows = try await store.auditLog(site: site, limit: max(1, limit))
        guard !rows.isEmpty else {
            print("the audit log is empty")
            return
        }
        let time = ISO8601DateFormatter()
        for row in rows {
            let entry = row.entry
            var line = "\(time.string(from: entry.time))  \(Self.phaseColumn(entry.phase))"
                + "\(entry.command)  by \(entry.source.isEmpty ? "?" : entry.source)  on \(entry.site)"
            if entry.phase == .refused, let reason = entry.reason {
                line += "\n    refused: \(reason)"
            } else if entry.phase == .attempted, let ticket = entry.ticketID {
                line += "\n    ticket \(ticket.uuidString) (lookout remote release \(ticket.uuidString.prefix(8)))"
            } else if [.sent, .failed, .indeterminate, .confirmed, .appError, .released].contains(entry.phase), !entry.detail.isEmpty {
                line += "\n    \(entry.detail)"
            }
            if row.repeats > 0 {
                line += "\n    repeated \(row.repeats) more time\(row.repeats == 1 ? "" : "s")"
                    + (row.lastRepeat.map { ", last at \(time.string(from: $0))" } ?? "")
            }
            print(line)
        }
    }

    /// The phase padded to the longest phase name and two spaces (`indeterminate` is 13 letters).
    static func phaseColumn(_ phase: AuditPhase) -> String {
        phase.rawValue.padding(toLength: "indeterminate".count + 2, withPad: " ", startingAt: 0)
    }
}
