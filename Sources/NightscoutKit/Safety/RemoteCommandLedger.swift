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
    /// Runs `decide` on the site's records inside one exclusive transaction and appends the entry
    /// it returns in that same transaction; returns its result.
    ///
    /// No other `reserve` of any process using this ledger may run between the read and the
    /// append (SQLite: `BEGIN IMMEDIATE`). `decide` gets the records whose `time` is at or after
    /// `now − window` and `now`: `given`, or the clock read once the lock is held (so callers are
    /// ordered as the ledger serves them). Throwing (the ledger cannot be read or written) means
    /// nothing was appended.
    func reserve<T: Sendable>(
        site: String, window: TimeInterval, now given: Date?,
        _ decide: @escaping @Sendable (_ records: [RemoteCommandRecord], _ now: Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T
}

/// The key a site's budget is kept under: the normalised origin and path of its URL.
public enum RemoteCommandSite {
    /// `scheme://host[:port]/path` with scheme and host lowercased, the default port (80 for
    /// http, 443 for https) dropped, no user, query or fragment, and trailing slashes removed, so
    /// `HTTPS://NS.Example.org:443/` and `https://ns.example.org` are one site.
    public static func key(for url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        let scheme = (components.scheme ?? "").lowercased()
        var text = scheme + "://" + (components.host ?? "").lowercased()
        if let port = components.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            text += ":\(port)"
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        return text + path
    }
}

/// An in-memory `AuditLog` and `RemoteCommandLedger` (tests, and hosts without a state store).
/// The actor serialises reservations, so the ledger is shared by every guard given this log.
public actor InMemoryAuditLog: RemoteCommandLedger {
    /// Every entry, in append order.
    public private(set) var entries: [AuditEntry] = []

    /// An empty log, or one holding `entries` (e.g. a previous run's).
    public init(entries: [AuditEntry] = []) { self.entries = entries }

    /// Appends one entry.
    public func append(_ entry: AuditEntry) async throws { entries.append(entry) }

    /// The entries of one site, in append order.
    public func entries(site: String) -> [AuditEntry] { entries.filter { $0.site == site } }

    /// The site's records derived with `RemoteCommandRecord.records(from:)`, at or after `since`.
    public func recentCommands(site: String, since: Date) -> [RemoteCommandRecord] {
        RemoteCommandRecord.records(from: entries.filter { $0.site == site }).filter { $0.time >= since }
    }

    /// Decides and appends without a suspension point in between (atomic on the actor).
    public func reserve<T: Sendable>(
        site: String, window: TimeInterval, now given: Date?,
        _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T {
        let now = given ?? Date()
        let decided = decide(recentCommands(site: site, since: now - window), now)
        entries.append(decided.entry)
        return decided.result
    }
}
