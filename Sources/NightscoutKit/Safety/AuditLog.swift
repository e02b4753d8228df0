import Foundation

/// A remote command flattened into fields for the audit log: kind plus amount or name.
///
/// Non-finite amounts (a refused NaN bolus) are encoded as the strings `"nan"`, `"inf"`,
/// `"-inf"`, so every entry encodes with a default `JSONEncoder`.
public struct AuditCommand: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `bolus`, `carbs`, `override`, `cancel_override`, `closed_loop` or `autobolus`
    /// (`LoopCommand.kind`).
    public var kind: String
    /// Units (bolus) or grams (carbs); nil for overrides.
    public var amount: Double?
    /// The override preset name; nil otherwise.
    public var name: String?
    /// Carb absorption time in hours, if given.
    public var absorptionHours: Double?
    /// Override duration in minutes, if given.
    public var durationMinutes: Double?
    /// Carb start time, if given.
    public var startDate: Date?
    /// On or off, for `closed_loop` and `autobolus`; nil otherwise.
    public var active: Bool?

    /// The fields of `command`.
    public init(_ command: LoopCommand) {
        kind = command.kind
        switch command {
        case .bolus(let units):
            amount = units
        case .carbs(let grams, let hours, let start):
            amount = grams; absorptionHours = hours; startDate = start
        case .override(let name, let minutes):
            self.name = name; durationMinutes = minutes
        case .cancelOverride:
            break
        case .closedLoop(let on), .autobolus(let on):
            active = on
        }
    }

    /// The command these fields describe, or nil when they are incomplete or the kind is unknown.
    public var loopCommand: LoopCommand? {
        switch kind {
        case "bolus": return amount.map { .bolus(units: $0) }
        case "carbs": return amount.map { .carbs(grams: $0, absorptionHours: absorptionHours, startDate: startDate) }
        case "override": return name.map { .override(name: $0, durationMinutes: durationMinutes) }
        case "cancel_override": return .cancelOverride
        case "closed_loop": return active.map { .closedLoop(active: $0) }
        case "autobolus": return active.map { .autobolus(active: $0) }
        default: return nil
        }
    }

    /// A short human description like `LoopCommand.description` (`bolus 1.5 U`, `carbs 20 g
    /// over 3 h`, `override Exercise for 60 min`), safe for any value: NaN, infinities and huge
    /// numbers print as `nan`, `inf`, `1e+300` (`LoopCommand.description` traps on them).
    public var description: String {
        func n(_ d: Double?) -> String { d.map(formatAmount) ?? "?" }
        switch kind {
        case "bolus": return "bolus \(n(amount)) U"
        case "carbs": return "carbs \(n(amount)) g" + (absorptionHours.map { " over \(n($0)) h" } ?? "")
        case "override": return "override \(name ?? "?")" + (durationMinutes.map { " for \(n($0)) min" } ?? "")
        case "cancel_override": return "cancel override"
        case "closed_loop": return "closed loop " + (active.map { $0 ? "on" : "off" } ?? "?")
        case "autobolus": return "autobolus " + (active.map { $0 ? "on" : "off" } ?? "?")
        default: return kind
        }
    }

    private enum CodingKeys: String, CodingKey {
        case kind, amount, name, absorptionHours, durationMinutes, startDate, active
    }

    /// Decodes the fields; numbers may also be the strings `nan`, `inf`, `-inf`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func number(_ key: CodingKeys) throws -> Double? {
            guard c.contains(key), try !c.decodeNil(forKey: key) else { return nil }
            if let d = try? c.decode(Double.self, forKey: key) { return d }
            switch try c.decode(String.self, forKey: key) {
            case "nan": return .nan
            case "inf": return .infinity
            case "-inf": return -.infinity
            case let s:
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not a number: \(s)")
            }
        }
        kind = try c.decode(String.self, forKey: .kind)
        amount = try number(.amount)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        absorptionHours = try number(.absorptionHours)
        durationMinutes = try number(.durationMinutes)
        startDate = try c.decodeIfPresent(Date.self, forKey: .startDate)
        active = try c.decodeIfPresent(Bool.self, forKey: .active)
    }

    /// Encodes the fields, non-finite numbers as strings.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func put(_ d: Double?, _ key: CodingKeys) throws {
            guard let d else { return }
            if d.isFinite { try c.encode(d, forKey: key) }
            else { try c.encode(d.isNaN ? "nan" : (d > 0 ? "inf" : "-inf"), forKey: key) }
        }
        try c.encode(kind, forKey: .kind)
        try put(amount, .amount)
        try c.encodeIfPresent(name, forKey: .name)
        try put(absorptionHours, .absorptionHours)
        try put(durationMinutes, .durationMinutes)
        if let startDate, startDate.timeIntervalSinceReferenceDate.isFinite {
            try c.encode(startDate, forKey: .startDate)
        }
        try c.encodeIfPresent(active, forKey: .active)
    }
}

/// The guard's verdict recorded in an audit entry.
public enum AuditVerdict: String, Sendable, Codable {
    /// The command passed every limit (a ticket was issued).
    case allowed
    /// The command was refused (including dry runs).
    case refused
}

/// The step of a command's life an audit entry records.
public enum AuditPhase: String, Sendable, Codable {
    /// Authorized: a ticket was issued and the amount reserved (in flight).
    case attempted
    /// Refused by a limit or validation.
    case refused
    /// The server accepted it.
    case sent
    /// The command was never sent: it did not leave this host (declined at the terminal, no OTP
    /// configured). Counts only for the minimum interval.
    case failed
    /// It is unknown whether sending worked (treated as sent).
    case indeterminate
    /// Loop reported back that it enacted the command (Remote 2.0: state `Success`).
    case confirmed
    /// The receiving app reported an error for a sent command (Remote 2.0: state `Error`). The
    /// command still counts as sent for every limit: it may have been partly enacted.
    case appError = "app-error"
    /// Passed every limit in dry-run mode; not sent.
    case dryRun = "dry-run"
    /// A person released the command's reservation (`lookout remote release ID`): from then on
    /// it counts only for the minimum interval. Nothing a script can reach writes this phase.
    case released
}

/// One append-only audit record of a remote command.
public struct AuditEntry: Sendable, Codable, Equatable, Identifiable {
    /// The entry's own identifier.
    public var id: UUID
    /// The ticket identifier linking the entries of one authorized command (attempted, sent, …);
    /// nil for refusals.
    public var ticketID: UUID?
    /// When it happened (the `now` given to the guard).
    public var time: Date
    /// The site the command was for.
    public var site: String
    /// The command.
    public var command: AuditCommand
    /// The script (or other caller) that asked.
    public var source: String
    /// Allowed or refused.
    public var verdict: AuditVerdict
    /// The refusal code (`RemoteCommandRefusal.code`) when refused.
    public var reasonCode: String?
    /// The human refusal text (`RemoteCommandRefusal.description`) when refused.
    public var reason: String?
    /// The step recorded.
    public var phase: AuditPhase
    /// Free text: the command description, or the server's answer for sent/failed entries.
    public var detail: String

    /// An entry with the given fields, each cut to `AuditText`'s sizes (a script chooses part
    /// of the text: an override name shows in the command, the reason and the detail); the site
    /// of an allowed command is kept whole.
    public init(
        id: UUID = UUID(), ticketID: UUID?, time: Date, site: String, command: AuditCommand,
        source: String, verdict: AuditVerdict, reasonCode: String? = nil, reason: String? = nil,
        phase: AuditPhase, detail: String
    ) {
        self.id = id
        self.ticketID = ticketID
        self.time = time
        // An allowed command's site keys its budget and comes from the config: kept whole.
        self.site = verdict == .refused ? AuditText.bounded(site, to: AuditText.textLimit) : site
        self.command = command.bounded
        self.source = AuditText.bounded(source, to: AuditText.fieldLimit)
        self.verdict = verdict
        self.reasonCode = AuditText.bounded(reasonCode, to: AuditText.fieldLimit)
        self.reason = AuditText.bounded(reason, to: AuditText.textLimit)
        self.phase = phase
        self.detail = AuditText.bounded(detail, to: AuditText.textLimit)
    }
}

/// An append-only store of audit entries (the host's SQLite state store implements it).
public protocol AuditLog: Sendable {
    /// Appends one entry. Entries are never changed or removed. Throwing makes the guard refuse
    /// an attempt it cannot record.
    func append(_ entry: AuditEntry) async throws
}

/// A remote command that was authorized (in flight), sent, or failed: what the guard needs to
/// enforce the rolling-hour totals, the minimum interval and the duplicate window.
public struct RemoteCommandRecord: Sendable, Codable, Equatable {
    /// Where the command stands.
    public enum Status: String, Sendable, Codable {
        /// Authorized, no outcome reported yet. Counts like `sent`.
        case inFlight
        /// Sent, or the outcome was indeterminate. Counts everywhere.
        case sent
        /// Never sent (it did not leave this host). Counts only for the minimum interval.
        case failed
        /// Released by a person (`lookout remote release`). Counts only for the minimum interval.
        case released
    }

    /// The ticket identifier.
    public var ticketID: UUID
    /// The site.
    public var site: String
    /// The latest time of the command: authorization, or the send/failure report if later.
    public var time: Date
    /// The command.
    public var command: AuditCommand
    /// Where it stands.
    public var status: Status

    /// A record with the given fields.
    public init(ticketID: UUID, site: String, time: Date, command: AuditCommand, status: Status) {
        self.ticketID = ticketID
        self.site = site
        self.time = time
        self.command = command
        self.status = status
    }

    /// Derives records from audit entries, as any `RemoteCommandHistory` built on an audit log
    /// should: one record per ticket whose `attempted` entry is present; status `sent` if a
    /// `sent` or `indeterminate` entry exists (these win over `failed`), else `failed` if a
    /// `failed` entry exists, else `inFlight`; a `released` entry makes it `released` whatever
    /// else was recorded; time is the latest of the attempted, sent, indeterminate and failed
    /// entries. Outcome reports (`confirmed`, `app-error`) change nothing. Refused and dry-run
    /// entries yield no record. Result in time order.
    public static func records(from entries: [AuditEntry]) -> [RemoteCommandRecord] {
        var byTicket: [UUID: RemoteCommandRecord] = [:]
        var order: [UUID] = []
        for e in entries where e.phase == .attempted {
            guard let id = e.ticketID, byTicket[id] == nil else { continue }
            byTicket[id] = RemoteCommandRecord(ticketID: id, site: e.site, time: e.time, command: e.command, status: .inFlight)
            order.append(id)
        }
        for e in entries {
            guard let id = e.ticketID, var r = byTicket[id] else { continue }
            switch e.phase {
            case .sent, .indeterminate:
                if r.status != .released { r.status = .sent }
                r.time = max(r.time, e.time)
            case .failed:
                if r.status == .inFlight { r.status = .failed }
                r.time = max(r.time, e.time)
            case .released:
                r.status = .released
            default:
                continue
            }
            byTicket[id] = r
        }
        return order.compactMap { byTicket[$0] }.sorted { $0.time < $1.time }
    }
}

