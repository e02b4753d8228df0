import Foundation
import GRDB
import NightscoutKit

/// A person giving a remote command's budget back (`lookout remote release ID`): the only way a
/// reservation stops counting against the hourly totals once it may have been sent. Nothing a
/// script can reach calls this; the release is an audit entry (phase `released`), so the
/// append-only log keeps both the command and who released it.
extension StateStore {
    /// A reserved command, as `lookout remote release` shows it before asking.
    public struct ReservedCommand: Sendable, Equatable {
        /// The ticket (shown by `lookout audit`).
        public var ticket: UUID
        /// The site key the budget is kept under.
        public var site: String
        /// The command.
        public var command: AuditCommand
        /// The script that sent it.
        public var source: String
        /// When it was authorized.
        public var authorizedAt: Date
        /// Where it stands (`inFlight`, `sent`, `failed`, `released`).
        public var status: RemoteCommandRecord.Status
    }

    /// The command whose ticket is `id` (the full identifier or a unique prefix of at least 8
    /// characters, any case), or whose Remote 2.0 id (`lookout remote list`) is `id`.
    public func reservedCommand(_ id: String) async throws -> ReservedCommand {
        let text = id.trimmingCharacters(in: .whitespaces)
        let found = try await access { db -> [ReservedCommand] in
            var tickets = try String.fetchAll(db, sql: """
                SELECT DISTINCT ticket FROM audit WHERE ticket IS NOT NULL AND phase = 'attempted' AND (ticket = ? OR ticket LIKE ?)
                """, arguments: [text.uppercased(), text.count >= 8 ? text.uppercased() + "%" : text.uppercased()])
            if tickets.isEmpty, !text.isEmpty {
                tickets = try String.fetchAll(db, sql: """
                    SELECT DISTINCT ticket FROM audit WHERE ticket IS NOT NULL AND phase IN ('sent', 'indeterminate')
                    AND detail LIKE ? ESCAPE '\\'
                    """, arguments: ["remote command 2.0 " + Self.likeEscaped(text) + " %"])
            }
            return try tickets.compactMap { try Self.reservedCommand(ticket: $0, in: db) }
        }
        guard let command = found.first else { throw ReleaseError.notFound(text) }
        guard found.count == 1 else { throw ReleaseError.ambiguous(text, found.map(\.ticket)) }
        return command
    }

    /// Releases the reservation of `ticket` (one command, exactly once): appends a `released`
    /// entry naming `by`, in one `BEGIN IMMEDIATE` transaction that first checks the command is
    /// still reserved. Returns the entry.
    public func releaseReservation(ticket: UUID, by: String, now: Date = Date()) async throws -> AuditEntry {
        do {
            return try await database.writeWithoutTransaction { db in
                var entry: AuditEntry?
                try db.inTransaction(.immediate) {
                    guard let command = try StateStore.reservedCommand(ticket: ticket.uuidString, in: db) else {
                        throw ReleaseError.notFound(ticket.uuidString)
                    }
                    switch command.status {
                    case .released: throw ReleaseError.alreadyReleased(ticket)
                    case .failed: throw ReleaseError.neverSent(ticket)
                    case .inFlight, .sent: break
                    }
                    let released = AuditEntry(
                        ticketID: ticket, time: now, site: command.site, command: command.command, source: by,
                        verdict: .allowed, phase: .released,
                        detail: "\(command.command) released by \(by): no longer counts against the hourly budget")
                    try StateStore.insert(released, command: try StateStore.commandText(released), in: db)
                    entry = released
                    return .commit
                }
                guard let entry else { throw ReleaseError.notFound(ticket.uuidString) }
                return entry
            }
        } catch let error as ReleaseError {
            throw error
        } catch {
            throw StateStoreError(file: path ?? ":memory:", underlying: error)
        }
    }

    private static func reservedCommand(ticket: String, in db: Database) throws -> ReservedCommand? {
        let entries = try Row.fetchAll(db, sql: "SELECT * FROM audit WHERE ticket = ? ORDER BY seq", arguments: [ticket])
            .compactMap(StateStore.auditEntry)
        guard let record = RemoteCommandRecord.records(from: entries).first,
              let attempted = entries.first(where: { $0.phase == .attempted }) else { return nil }
        return ReservedCommand(ticket: record.ticketID, site: record.site, command: record.command, source: attempted.source,
                               authorizedAt: attempted.time, status: record.status)
    }

    private static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

/// Why `lookout remote release` released nothing.
public enum ReleaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No reserved command has that ticket or Remote 2.0 id.
    case notFound(String)
    /// The prefix names several tickets.
    case ambiguous(String, [UUID])
    /// A person released it already.
    case alreadyReleased(UUID)
    /// It was never sent (declined, no OTP): it holds no hourly budget.
    case neverSent(UUID)

    /// The message.
    public var description: String {
        switch self {
        case .notFound(let id): return "no remote command with ticket or id \(id) in the audit log"
        case .ambiguous(let id, let tickets):
            return "\(id) names \(tickets.count) commands: " + tickets.map(\.uuidString).sorted().joined(separator: ", ")
        case .alreadyReleased(let t): return "the reservation of \(t.uuidString) was already released"
        case .neverSent(let t): return "\(t.uuidString) was never sent: it holds no budget"
        }
    }
}
