import ArgumentParser
import Foundation
import LookoutStore
import Lua

/// `lookout ack ID [--by NAME]`: acknowledges an alert's current episode from the shell; the
/// script that checks the alert sees it at its next check. `lookout ack ID --snooze 30m` snoozes the
/// current episode instead (as the web view's Snooze button does). `lookout ack --list` shows the alerts.
struct AckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ack",
        abstract: "Acknowledge a firing alert (stops its repeats and escalation for this episode).",
        discussion: """
            Alerts are defined by scripts (the `alert` library) and kept in the state database. An
            acknowledgement applies to the alert's current episode: if it clears and fires again, it
            notifies again. Urgent alerts notify again when the acknowledgement expires (30 min by
            default) and the alert still fires.
            """)

    @Argument(help: "The alert's id (see `lookout ack --list`).")
    var id: String?

    @Option(help: "Who acknowledges (default: $USER).")
    var by: String?

    @Flag(help: "List the alerts and their states instead.")
    var list = false

    @Option(help: "Snooze the current episode for this long instead of acknowledging it (1m to 24h, e.g. 30m).")
    var snooze: String?

    func validate() throws {
        if !list && id == nil { throw ValidationError("give an alert id, or --list") }
        if let snooze {
            guard let seconds = Quantities.parseDuration(snooze), AlertAcks.snoozeRange.contains(seconds) else {
                throw ValidationError("--snooze: expected a duration from 1m to 24h such as 30m, got \(snooze)")
            }
        }
    }

    func run() async throws {
        let environment = try HostEnvironment.load()
        let acks = AlertAcks(paths: environment.paths)
        if list {
            print(Self.table(try await Self.report { try await acks.list() }))
            return
        }
        let who = by ?? ProcessInfo.processInfo.environment["USER"] ?? "cli"
        if let snooze, let seconds = Quantities.parseDuration(snooze) {
            let status = try await Self.report { try await acks.snooze(id: id!, by: who, for: seconds) }
            let until = status.snoozedUntil.map { ISO8601DateFormatter().string(from: $0) } ?? "?"
            print("snoozed \(status.id) (episode \(status.episode)) by \(status.snoozedBy ?? who) until \(until)")
            return
        }
        let status = try await Self.report { try await acks.ack(id: id!, by: who) }
        print("acknowledged \(status.id) (episode \(status.episode)) by \(status.ackedBy ?? who)")
    }

    /// Runs `body`; an unknown or quiet alert is a usage error naming it.
    static func report<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as AlertAckError {
            throw HostSetupError(description: error.description)
        } catch let error as StateStoreError {
            throw HostSetupError(description: error.description)
        }
    }

    /// Alerts as an aligned table.
    static func table(_ alerts: [AlertStatus]) -> String {
        guard !alerts.isEmpty else { return "no alerts (no script has checked one yet)" }
        let time = ISO8601DateFormatter()
        // CHECKED shows when the script last looked: an old time means no script is watching.
        // WHY is the script's own reading of the data ("pending: below 70 for 9 min of 15 min …").
        let header = ["ID", "STATE", "SEVERITY", "SINCE", "EPISODE", "ACKED BY", "SNOOZED BY", "CHECKED", "SCRIPT", "WHY"]
        let rows = alerts.map { a in
            [a.id, a.state, a.severity, time.string(from: a.since), String(a.episode), a.ackedBy ?? "",
             a.snoozedBy.map { by in by + (a.snoozedUntil.map { " until " + time.string(from: $0) } ?? "") } ?? "",
             time.string(from: a.updatedAt), a.script, a.why ?? ""]
        }
        return TextTable.render(header, rows)
    }
}
