import Foundation
import NightscoutKit
import PostgresNIO

/// The append-only audit log and the remote-command ledger on PostgreSQL.
///
/// A reservation runs in one transaction that first takes a transaction-level advisory lock
/// keyed by the site (`pg_advisory_xact_lock(hashtextextended('lookout.ledger:' || site, 0))`),
/// then reads the site's recent rows, decides and appends. Every Lookout process on every
/// machine using the database takes the same lock for the same site, so reservations of one
/// site (one pump) are served one at a time, each seeing the ones before it: one budget per
/// site, across instances. Different sites do not wait for each other (a hash collision only
/// makes two sites take turns). The lock is released by COMMIT or ROLLBACK, also when the
/// connection is lost.
extension PostgresStateStore: RemoteCommandAudit {
    /// Appends one entry (its own statement).
    public func append(_ entry: AuditEntry) async throws {
        let command = try StateStore.commandText(entry)
        try await withConnection { [self] connection in try await self.insert(entry, command: command, on: connection) }
    }

    /// Locks the site and `keys` and every key linked to them through a recent command, reads
    /// the records of all of them, decides, appends and records the ticket under `site` and
    /// `keys`, in one transaction. Every key a reservation reads under is locked before it reads
    /// (transaction-level advisory locks, always taken in key order, all at the start), and a
    /// reservation links keys only while holding their locks, so two reservations sharing a
    /// budget are served one after the other. When the links show a key not locked yet, the
    /// transaction ends without deciding and starts again with the larger set (at most
    /// `lockRounds` times; then it throws, nothing appended, and the guard refuses).
    public func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?,
        _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T {
        try await reserve(site: site, keys: keys, window: window, now: given, fence: nil, decide)
    }

    /// ``reserve(site:keys:window:now:_:)`` under a cluster lease: the transaction first checks
    /// (with a share lock on the lease's row) that `fence` is still the live holding, and throws
    /// ``LeaseLost`` (nothing appended) when it is not.
    public func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?, fence: LeaseFence?,
        _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T {
        var wanted = Set(keys + [site])
        for _ in 0..<Self.lockRounds {
            let locked = wanted
            let round = try await transaction { [self] connection -> LockRound<T> in
                if let fence, try await !self.leaseIsHeld(fence, on: connection) { throw LeaseLost(fence: fence) }
                for key in locked.sorted() { try await self.lockSite(key, on: connection) }
                let linkedSince = (given ?? Date()) - window - StateStore.budgetKeySlack
                let linked = try await self.linkedKeys(Array(locked), since: linkedSince, on: connection)
                guard linked.isSubset(of: locked) else { return .grow(linked) }
                let now = given ?? Date()
                let records = try await self.records(site: site, keys: Array(locked), since: now - window, on: connection)
                let decided = decide(records, now)
                try await self.insert(decided.entry, command: try StateStore.commandText(decided.entry), on: connection)
                if let ticket = decided.entry.ticketID {
                    for key in Set(keys + [site]) {
                        try await self.execute("""
                            INSERT INTO remote_budget_keys (key, ticket, time)
                            VALUES (\(key), \(ticket.uuidString), \(decided.entry.time.timeIntervalSince1970))
                            ON CONFLICT (key, ticket) DO NOTHING
                            """, on: connection)
                    }
                }
                return .done(decided.result)
            }
            switch round {
            case .done(let result): return result
            case .grow(let linked): wanted.formUnion(linked)
            }
        }
        throw StateStoreError(file: location, message: "the budget keys of \(site) kept changing while they were being locked; "
                              + "nothing was reserved", retryable: true)
    }

    /// How many times a reservation starts again with more keys before it gives up.
    static let lockRounds = 8

    /// One try of a reservation: decided, or more keys to lock first.
    private enum LockRound<T: Sendable>: Sendable {
        case done(T)
        case grow(Set<String>)
    }

    /// Claims `code` (time step `counter`) for `pumps` in one transaction holding each pump's
    /// advisory lock (in key order); see `RemoteCommandLedger.claimOneTimeCode`. Codes older than
    /// `RemoteCommandOTP.reuseWindow` are forgotten in the same transaction; the primary key
    /// (pump, counter) refuses a second claim of a time step even without the lock.
    public func claimOneTimeCode(_ code: String, counter: UInt64, pumps: [String], now: Date) async throws -> Bool {
        let pumps = Array(Set(pumps)).sorted()
        guard !pumps.isEmpty else { return true }
        let step = Int64(bitPattern: counter)
        let time = now.timeIntervalSince1970
        return try await transaction { [self] connection in
            for pump in pumps {
                try await self.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("lookout.otp:" + pump), 0))", on: connection)
            }
            try await self.execute("DELETE FROM remote_otp_codes WHERE time < \(time - RemoteCommandOTP.reuseWindow)", on: connection)
            let used = try await self.rows("""
                SELECT count(*) AS n FROM remote_otp_codes WHERE pump = ANY(\(pumps)) AND (counter = \(step) OR code = \(code))
                """, on: connection).first.map { try $0["n"].decode(Int.self) } ?? 0
            guard used == 0 else { return false }
            for pump in pumps {
                try await self.execute("""
                    INSERT INTO remote_otp_codes (pump, counter, code, time) VALUES (\(pump), \(step), \(code), \(time))
                    """, on: connection)
            }
            return true
        }
    }

    /// The site's in-flight, sent, failed and released commands since `since`.
    public func recentCommands(site: String, since: Date) async throws -> [RemoteCommandRecord] {
        try await withConnection { [self] connection in try await self.records(site: site, since: since, on: connection) }
    }

    /// The newest `limit` entries (of one site, or all), oldest first, each with the refusals
    /// counted on it.
    public func auditLog(site: String? = nil, limit: Int = 100) async throws -> [AuditRecordRow] {
        try await withConnection { [self] connection in
            let rows = if let site {
                try await self.rows("""
                    SELECT audit.*, audit_repeats.count AS repeats, audit_repeats.last_time AS last_repeat
                    FROM audit LEFT JOIN audit_repeats USING (seq) WHERE site = \(site) ORDER BY seq DESC LIMIT \(limit)
                    """, on: connection)
            } else {
                try await self.rows("""
                    SELECT audit.*, audit_repeats.count AS repeats, audit_repeats.last_time AS last_repeat
                    FROM audit LEFT JOIN audit_repeats USING (seq) ORDER BY seq DESC LIMIT \(limit)
                    """, on: connection)
            }
            return rows.reversed().compactMap { row in
                Self.auditEntry(row).map { entry in
                    AuditRecordRow(entry: entry, repeats: ((try? row["repeats"].decode(Int?.self)) ?? nil) ?? 0,
                                   lastRepeat: ((try? row["last_repeat"].decode(Double?.self)) ?? nil)
                                       .map { Date(timeIntervalSince1970: $0) })
                }
            }
        }
    }

    /// The newest `limit` entries (of one site, or all), oldest first.
    public func auditEntries(site: String? = nil, limit: Int = 100) async throws -> [AuditEntry] {
        try await withConnection { [self] connection in
            let rows = if let site {
                try await self.rows("SELECT * FROM audit WHERE site = \(site) ORDER BY seq DESC LIMIT \(limit)", on: connection)
            } else {
                try await self.rows("SELECT * FROM audit ORDER BY seq DESC LIMIT \(limit)", on: connection)
            }
            return rows.reversed().compactMap(Self.auditEntry)
        }
    }

    /// The command whose ticket is `id` (full, or a unique prefix of 8+ characters), or whose
    /// Remote 2.0 id is `id`.
    public func reservedCommand(_ id: String) async throws -> StateStore.ReservedCommand {
        let text = id.trimmingCharacters(in: .whitespaces)
        let found = try await withConnection { [self] connection -> [StateStore.ReservedCommand] in
            let pattern = text.count >= 8 ? Self.likeEscaped(text.uppercased()) + "%" : Self.likeEscaped(text.uppercased())
            var tickets = try await self.rows("""
                SELECT DISTINCT ticket FROM audit WHERE ticket IS NOT NULL AND phase = 'attempted'
                AND (ticket = \(text.uppercased()) OR ticket LIKE \(pattern))
                """, on: connection).map { try $0["ticket"].decode(String.self) }
            if tickets.isEmpty, !text.isEmpty {
                tickets = try await self.rows("""
                    SELECT DISTINCT ticket FROM audit WHERE ticket IS NOT NULL AND phase IN ('sent', 'indeterminate')
                    AND detail LIKE \("remote command 2.0 " + Self.likeEscaped(text) + " %")
                    """, on: connection).map { try $0["ticket"].decode(String.self) }
            }
            var commands: [StateStore.ReservedCommand] = []
            for ticket in tickets {
                if let command = try await self.reservedCommand(ticket: ticket, on: connection) { commands.append(command) }
            }
            return commands
        }
        guard let command = found.first else { throw ReleaseError.notFound(text) }
        guard found.count == 1 else { throw ReleaseError.ambiguous(text, found.map(\.ticket)) }
        return command
    }

    /// Releases the reservation of `ticket` once, under the site's ledger lock.
    public func releaseReservation(ticket: UUID, by: String, now: Date = Date()) async throws -> AuditEntry {
        let outcome = try await transaction { [self] connection -> Result<AuditEntry, ReleaseError> in
            guard let site = try await self.rows("SELECT site FROM audit WHERE ticket = \(ticket.uuidString) LIMIT 1", on: connection)
                .first.map({ try $0["site"].decode(String.self) }) else { return .failure(.notFound(ticket.uuidString)) }
            try await self.lockSite(site, on: connection)
            guard let command = try await self.reservedCommand(ticket: ticket.uuidString, on: connection) else {
                return .failure(.notFound(ticket.uuidString))
            }
            switch command.status {
            case .released: return .failure(.alreadyReleased(ticket))
            case .failed: return .failure(.neverSent(ticket))
            case .inFlight, .sent: break
            }
            let released = AuditEntry(
                ticketID: ticket, time: now, site: command.site, command: command.command, source: by,
                verdict: .allowed, phase: .released,
                detail: "\(command.command) released by \(by): no longer counts against the hourly budget")
            try await self.insert(released, command: try StateStore.commandText(released), on: connection)
            return .success(released)
        }
        return try outcome.get()
    }

    // MARK: Helpers

    /// The ledger lock of one site, held until the transaction ends.
    func lockSite(_ site: String, on connection: PostgresConnection) async throws {
        try await execute("SELECT pg_advisory_xact_lock(hashtextextended(\("lookout.ledger:" + site), 0))", on: connection)
    }

    /// Every key linked to `keys` through a ticket recorded since `since` (closed transitively).
    func linkedKeys(_ keys: [String], since: Date, on connection: PostgresConnection) async throws -> Set<String> {
        let rows = try await rows("""
            WITH RECURSIVE linked(key) AS (
                SELECT key COLLATE "C" FROM unnest(\(keys)::text[]) AS start(key)
                UNION
                SELECT other.key FROM remote_budget_keys AS one
                    JOIN remote_budget_keys AS other ON other.ticket = one.ticket
                    JOIN linked ON one.key = linked.key
                WHERE one.time >= \(since.timeIntervalSince1970))
            SELECT key FROM linked
            """, on: connection)
        return Set(try rows.map { try $0["key"].decode(String.self) })
    }

    func records(site: String, keys: [String] = [], since: Date, on connection: PostgresConnection) async throws -> [RemoteCommandRecord] {
        let linked = Array(try await linkedKeys([site] + keys, since: since - StateStore.budgetKeySlack, on: connection))
        let from = since.timeIntervalSince1970 - StateStore.budgetKeySlack
        let entries = try await rows("""
            SELECT * FROM audit WHERE ticket IN (
                SELECT DISTINCT ticket FROM audit WHERE site = ANY(\(linked)) AND time >= \(since.timeIntervalSince1970)
                    AND ticket IS NOT NULL
                UNION SELECT ticket FROM remote_budget_keys WHERE time >= \(from) AND key = ANY(\(linked)))
            ORDER BY seq
            """, on: connection).compactMap(Self.auditEntry)
        return RemoteCommandRecord.records(from: entries).filter { $0.time >= since }
    }

    /// Writes `entry` as a row, or counts it on an earlier row (`AuditRepeats.target`).
    func insert(_ entry: AuditEntry, command: String, on connection: PostgresConnection) async throws {
        if AuditRepeats.mayFold(entry) {
            let recent = try await rows("""
                SELECT * FROM audit WHERE site = \(entry.site) AND time >= \((entry.time - AuditRepeats.window).timeIntervalSince1970)
                    AND verdict = 'refused' AND ticket IS NULL
                ORDER BY seq DESC LIMIT \(AuditRepeats.candidates)
                """, on: connection).compactMap { row -> (key: Int64, entry: AuditEntry)? in
                    guard let seq = try? row["seq"].decode(Int64.self), let entry = Self.auditEntry(row) else { return nil }
                    return (key: seq, entry: entry)
                }
            if let seq = AuditRepeats.target(for: entry, among: recent) {
                try await execute("""
                    INSERT INTO audit_repeats (seq, count, last_time) VALUES (\(seq), 1, \(entry.time.timeIntervalSince1970))
                    ON CONFLICT (seq) DO UPDATE SET count = audit_repeats.count + 1,
                        last_time = greatest(audit_repeats.last_time, excluded.last_time)
                    """, on: connection)
                return
            }
        }
        try await execute("""
            INSERT INTO audit (id, ticket, time, site, source, verdict, reason_code, reason, phase, detail, command)
            VALUES (\(entry.id.uuidString), \(entry.ticketID?.uuidString), \(entry.time.timeIntervalSince1970), \(entry.site),
                    \(entry.source), \(entry.verdict.rawValue), \(entry.reasonCode), \(entry.reason), \(entry.phase.rawValue),
                    \(entry.detail), \(command))
            """, on: connection)
    }

    private func reservedCommand(ticket: String, on connection: PostgresConnection) async throws -> StateStore.ReservedCommand? {
        let entries = try await rows("SELECT * FROM audit WHERE ticket = \(ticket) ORDER BY seq", on: connection)
            .compactMap(Self.auditEntry)
        guard let record = RemoteCommandRecord.records(from: entries).first,
              let attempted = entries.first(where: { $0.phase == .attempted }) else { return nil }
        return StateStore.ReservedCommand(ticket: record.ticketID, site: record.site, command: record.command,
                                          source: attempted.source, authorizedAt: attempted.time, status: record.status)
    }

    /// A row as an entry (`nil` for a row this version cannot read).
    static func auditEntry(_ row: PostgresRandomAccessRow) -> AuditEntry? {
        guard let idText = try? row["id"].decode(String.self), let id = UUID(uuidString: idText),
              let verdict = (try? row["verdict"].decode(String.self)).flatMap(AuditVerdict.init(rawValue:)),
              let phase = (try? row["phase"].decode(String.self)).flatMap(AuditPhase.init(rawValue:)),
              let commandText = try? row["command"].decode(String.self),
              let command = try? JSONDecoder().decode(AuditCommand.self, from: Data(commandText.utf8)),
              let time = try? row["time"].decode(Double.self), let site = try? row["site"].decode(String.self),
              let source = try? row["source"].decode(String.self), let detail = try? row["detail"].decode(String.self)
        else { return nil }
        let ticket = ((try? row["ticket"].decode(String?.self)) ?? nil).flatMap(UUID.init(uuidString:))
        return AuditEntry(id: id, ticketID: ticket, time: Date(timeIntervalSince1970: time), site: site, command: command,
                          source: source, verdict: verdict, reasonCode: (try? row["reason_code"].decode(String?.self)) ?? nil,
                          reason: (try? row["reason"].decode(String?.self)) ?? nil, phase: phase, detail: detail)
    }

    private static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
