import Foundation

/// The durable book `RemoteCommandGuard` reserves remote commands against: one budget per site,
/// shared by everyone who uses the same ledger (the host implements it on its SQLite state
/// database, so every process, profile and worker of a machine shares it).
///
/// A reservation is the `attempted` audit entry of a command; the records the guard checks are
/// derived from the audit entries with `RemoteCommandRecord.records(from:)`. Only entries the
/// host writes count: nothing a script can write (treatments, device status, remote-command
/// state) changes what a ledger holds.
public protocol RemoteCommandLedger: AuditLog {
    /// Runs `decide` on the records of the commands sharing a budget with this one inside one
    /// exclusive transaction and appends the entry it returns in that same transaction; returns
    /// its result.
    ///
    /// The records are those of every command reserved under `site` or any of `keys` (the other
    /// keys of what receives the command: `RemoteCommandSite.keys(for:)`, a Loop device's
    /// `deviceKey`), or under a key linked to those through such a command, transitively; an
    /// appended entry with a ticket is recorded under `site` and all of `keys`.
    /// No other `reserve` of any process using this ledger may run between the read and the
    /// append (SQLite: `BEGIN IMMEDIATE`). `decide` gets the records whose `time` is at or after
    /// `now − window` and `now`: `given`, or the clock read once the lock is held (so callers are
    /// ordered as the ledger serves them). Throwing (the ledger cannot be read or written) means
    /// nothing was appended.
    func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?,
        _ decide: @escaping @Sendable (_ records: [RemoteCommandRecord], _ now: Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T

    /// Claims the one-time code `code` of TOTP time step `counter` for every pump key in `pumps`,
    /// in one exclusive transaction: true when none of them has used that time step or that
    /// code in the last `RemoteCommandOTP.reuseWindow` (the claim is recorded), false when one
    /// has (nothing is recorded). Loop refuses a code it has seen ("Password … was already
    /// used"), so a code is sent at most once per pump, by any process using this ledger.
    func claimOneTimeCode(_ code: String, counter: UInt64, pumps: [String], now: Date) async throws -> Bool
}

/// One-time codes and the pumps they were used for (see `RemoteCommandLedger.claimOneTimeCode`).
public enum RemoteCommandOTP {
    /// How long a used code is remembered (Loop accepts a code for a few periods at most).
    public static let reuseWindow: TimeInterval = 15 * 60
}

/// An in-memory `AuditLog` and `RemoteCommandLedger` (tests, and hosts without a state store).
/// The actor serialises reservations, so the ledger is shared by every guard given this log.
public actor InMemoryAuditLog: RemoteCommandLedger {
    /// Every entry, in append order.
    public private(set) var entries: [AuditEntry] = []
    /// The budget keys each reserved ticket was recorded under (besides its entries' site).
    private var ticketKeys: [UUID: Set<String>] = [:]
    /// Claimed one-time codes: pump key, time step, code, when.
    private var claimedCodes: [(pump: String, counter: UInt64, code: String, time: Date)] = []

    /// An empty log, or one holding `entries` (e.g. a previous run's).
    public init(entries: [AuditEntry] = []) { self.entries = entries }

    /// Appends one entry.
    public func append(_ entry: AuditEntry) async throws { entries.append(entry) }

    /// The entries of one site, in append order.
    public func entries(site: String) -> [AuditEntry] { entries.filter { $0.site == site } }

    /// The records of the commands reserved under `site` or any of `keys`, derived with
    /// `RemoteCommandRecord.records(from:)`, at or after `since`.
    public func recentCommands(site: String, keys: [String] = [], since: Date) -> [RemoteCommandRecord] {
        var wanted = Set(keys).union([site])
        var tickets = Set<UUID>()
        while true {  // every key linked through a ticket, transitively
            tickets = Set(ticketKeys.filter { !$0.value.isDisjoint(with: wanted) }.keys)
            let linked = tickets.reduce(wanted) { $0.union(ticketKeys[$1] ?? []) }
            if linked == wanted { break }
            wanted = linked
        }
        let shared = entries.filter { wanted.contains($0.site) || ($0.ticketID.map(tickets.contains) ?? false) }
        return RemoteCommandRecord.records(from: shared).filter { $0.time >= since }
    }

    /// Decides and appends without a suspension point in between (atomic on the actor).
    public func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?,
        _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T {
        let now = given ?? Date()
        let decided = decide(recentCommands(site: site, keys: keys, since: now - window), now)
        entries.append(decided.entry)
        if let ticket = decided.entry.ticketID { ticketKeys[ticket, default: []].formUnion(keys + [site]) }
        return decided.result
    }

    /// Claims a code for the pumps (atomic on the actor).
    public func claimOneTimeCode(_ code: String, counter: UInt64, pumps: [String], now: Date) -> Bool {
        let wanted = Set(pumps)
        claimedCodes.removeAll { now.timeIntervalSince($0.time) > RemoteCommandOTP.reuseWindow }
        if claimedCodes.contains(where: { wanted.contains($0.pump) && ($0.counter == counter || $0.code == code) }) { return false }
        for pump in wanted { claimedCodes.append((pump, counter, code, now)) }
        return true
    }
}
