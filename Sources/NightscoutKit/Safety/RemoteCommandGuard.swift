import Foundation

/// Enforces `TherapyLimits` on Loop remote commands and records every attempt in an `AuditLog`.
///
/// Every command passes through `authorize`, which validates it, checks it against the limits
/// and the site's recent commands, and either reserves it (handing out a ticket) or refuses it;
/// the caller reports the send with `complete`. All decisions, sends and failures are audited
/// from here, so the audit log sees everything.
///
/// Rules (all per site):
/// * **Amounts** must be finite, positive multiples of 0.01 (U or g), compared with a tolerance
///   of 1e-6 of a step, so `0.1 + 0.2` counts as 0.30 but `0.005`, `1.001` and `1e-300` are
///   refused (`tooPrecise`). Accounting is done in whole hundredths, so totals never drift.
/// * **Reservation**: an allowed ticket's amount counts in the rolling-hour total from the moment
///   it is issued (in flight), so concurrent callers cannot overshoot: the check and the
///   reservation happen without a suspension point in between.
/// * **Rolling hour**: a command counts while less than 3600 s have passed since its time (its
///   authorization, moved to the send report if later). Commands "in the future" (the clock went
///   back) count too.
/// * **Failed sends** (`RemoteCommandOutcome.failed`: definitely not delivered) release the
///   hourly reservation and the duplicate window, but still count for the minimum interval, so a
///   failing script cannot retry faster than `minimumInterval`. An `indeterminate` outcome, and a
///   ticket never completed, count as sent.
/// * **Minimum interval** applies between any two commands of the site (any kind), measured from
///   the later of authorization and send report; a clock that went back is refused as too soon.
/// * **Duplicates**: same kind and same amount (in hundredths), or same override name (duration
///   ignored), or two `cancelOverride`s, within `duplicateWindow` of a sent or in-flight one.
/// * **Parameters**: carb absorption must be in (0, 24] hours and an override duration in
///   (0, 10080] minutes when given; a carb start date must be finite.
/// * **Overrides** need an exact, case-sensitive name in `allowedOverrides`; `cancelOverride` is
///   allowed only when at least one override name is configured.
/// * **Toggles** (`closedLoop`, `autobolus`, Remote 2.0) need their kind in `allowedToggles`;
///   switching the same toggle to the same value again within `duplicateWindow` is a duplicate.
/// * **Dry run** (`live` false): a command passing every limit is refused with `dryRun` and
///   audited as `dry-run`. It is counted in this guard's memory as if sent (so a dry run shows
///   what live mode would do), but never written as an attempt, so it does not count after a
///   restart.
/// * **Restarts**: the first use of a site reads `RemoteCommandHistory.recentCommands` once; if
///   that fails, commands of the site are refused (`historyUnavailable`) and the read is retried
///   on the next call. After that the guard keeps its own state in memory.
/// * **Audit failures**: if the `attempted` entry cannot be appended, the reservation is undone
///   and the command refused (`auditUnavailable`).
public actor RemoteCommandGuard {
    /// The guard's decision type.
    public typealias Decision = RemoteCommandDecision

    /// The limits in force (fixed for the guard's lifetime).
    public nonisolated let limits: TherapyLimits
    /// The text of the last audit append that failed, if any.
    public private(set) var lastAuditError: String?

    private let auditLog: any AuditLog
    private let history: (any RemoteCommandHistory)?
    private let limitBolus: Int64, limitCarbs: Int64, limitBolusHour: Int64, limitCarbsHour: Int64
    private var sites: [String: [Reservation]] = [:]
    private var loads: [String: Task<[RemoteCommandRecord], any Error>] = [:]

    /// A guard enforcing `limits`, auditing to `auditLog` and reloading state from `history`
    /// (nil: start empty). Throws when `limits` are invalid.
    public init(limits: TherapyLimits, auditLog: any AuditLog, history: (any RemoteCommandHistory)?) throws(TherapyLimitsError) {
        self.limits = try limits.validated()
        self.auditLog = auditLog
        self.history = history
        limitBolus = Self.limitHundredths(limits.maxBolusUnits)
        limitCarbs = Self.limitHundredths(limits.maxCarbsGrams)
        limitBolusHour = Self.limitHundredths(limits.maxBolusUnitsPerHour)
        limitCarbsHour = Self.limitHundredths(limits.maxCarbsGramsPerHour)
    }

    /// A guard using one `InMemoryAuditLog` as both audit log and history.
    public init(limits: TherapyLimits, log: InMemoryAuditLog) throws(TherapyLimitsError) {
        try self.init(limits: limits, auditLog: log, history: log)
    }

    /// Decides whether `command` may be sent to `site` now, on behalf of `source` (the script
    /// name), reserving it when allowed. Every call writes exactly one audit entry: `attempted`
    /// (allowed), `refused`, or `dry-run`.
    /// `now` defaults to the clock read inside the guard, so concurrent callers are ordered as
    /// the guard serves them (a time read before the call could look like a clock going back).
    public func authorize(_ command: LoopCommand, site: String, source: String = "", now given: Date? = nil) async -> Decision {
        var now = given ?? Date()
        let checked: Checked
        switch check(command, site: site) {
        case .failure(let reason): return await refuse(command, reason, site: site, source: source, now: now)
        case .success(let c): checked = c
        }
        do {
            try await ensureLoaded(site: site, now: now)
        } catch {
            return await refuse(command, .historyUnavailable(String(describing: error)), site: site, source: source, now: now)
        }
        // From here to the reservation there is no suspension point: atomic per actor.
        if given == nil { now = Date() }
        if let reason = stateRefusal(checked, site: site, now: now) {
            return await refuse(command, reason, site: site, source: source, now: now)
        }
        let id = UUID()
        let reservation = Reservation(
            ticketID: id, time: now, command: checked.command, kind: checked.kind,
            hundredths: checked.hundredths, key: checked.key, status: limits.live ? .inFlight : .simulated)
        sites[site, default: []].append(reservation)

        guard limits.live else {
            let reason = RemoteCommandRefusal.dryRun(wouldSend: checked.command)
            await write(AuditEntry(
                ticketID: nil, time: now, site: site, command: AuditCommand(command), source: source,
                verdict: .refused, reasonCode: reason.code, reason: reason.description,
                phase: .dryRun, detail: AuditCommand(checked.command).description))
            return .refused(reason)
        }
        let ticket = RemoteCommandTicket(id: id, site: site, command: checked.command, source: source, authorizedAt: now)
        do {
            try await auditLog.append(AuditEntry(
                ticketID: id, time: now, site: site, command: AuditCommand(checked.command), source: source,
                verdict: .allowed, phase: .attempted, detail: AuditCommand(checked.command).description))
        } catch {
            lastAuditError = String(describing: error)
            sites[site]?.removeAll { $0.ticketID == id }
            return .refused(.auditUnavailable(String(describing: error)))
        }
        return .allowed(ticket)
    }

    /// Records the result of sending `ticket`'s command and audits it (`sent`, `failed` or
    /// `indeterminate`). A failure releases the hourly and duplicate reservation (see the type's
    /// rules). Returns false, changing and auditing nothing, when the ticket is not in flight
    /// (already completed, or unknown to this guard).
    @discardableResult
    public func complete(_ ticket: RemoteCommandTicket, outcome: RemoteCommandOutcome, now: Date? = nil) async -> Bool {
        let now = now ?? Date()
        guard let index = sites[ticket.site]?.firstIndex(where: { $0.ticketID == ticket.id && $0.status == .inFlight })
        else { return false }
        let phase: AuditPhase
        let detail: String
        switch outcome {
        case .sent(let d): phase = .sent; detail = d
        case .failed(let d): phase = .failed; detail = d
        case .indeterminate(let d): phase = .indeterminate; detail = d
        }
        sites[ticket.site]![index].status = phase == .failed ? .failed : .sent
        sites[ticket.site]![index].time = max(sites[ticket.site]![index].time, now)
        await write(AuditEntry(
            ticketID: ticket.id, time: now, site: ticket.site, command: AuditCommand(ticket.command),
            source: ticket.source, verdict: .allowed, phase: phase,
            detail: detail.isEmpty ? AuditCommand(ticket.command).description : detail))
        return true
    }

    /// Audits that Loop reported enacting `ticket`'s command (phase `confirmed`). Changes no limit.
    public func confirm(_ ticket: RemoteCommandTicket, detail: String = "", now: Date? = nil) async {
        let now = now ?? Date()
        await write(AuditEntry(
            ticketID: ticket.id, time: now, site: ticket.site, command: AuditCommand(ticket.command),
            source: ticket.source, verdict: .allowed, phase: .confirmed,
            detail: detail.isEmpty ? AuditCommand(ticket.command).description : detail))
    }

    /// Audits that the receiving app reported an error for `ticket`'s sent command (phase
    /// `app-error`, Remote 2.0 state `Error`). Changes no limit: the command keeps counting.
    public func reportAppError(_ ticket: RemoteCommandTicket, detail: String, now: Date? = nil) async {
        await write(AuditEntry(
            ticketID: ticket.id, time: now ?? Date(), site: ticket.site, command: AuditCommand(ticket.command),
            source: ticket.source, verdict: .allowed, phase: .appError,
            detail: detail.isEmpty ? AuditCommand(ticket.command).description : detail))
    }

    /// The longest carb absorption time accepted, in hours (longer: `invalidParameter`).
    public static let maxAbsorptionHours: Double = 24
    /// The longest override duration accepted, in minutes (one week; longer: `invalidParameter`).
    public static let maxOverrideMinutes: Double = 7 * 24 * 60

    // MARK: - Internals

    private enum Kind { case bolus, carbs, other }

    private struct DuplicateKey: Hashable {
        var kind: String
        var hundredths: Int64?
        var name: String?
    }

    private struct Checked {
        var command: LoopCommand
        var kind: Kind
        var hundredths: Int64
        var key: DuplicateKey
    }

    private struct Reservation {
        enum Status { case inFlight, sent, failed, simulated }
        var ticketID: UUID
        var time: Date
        var command: LoopCommand
        var kind: Kind
        var hundredths: Int64
        var key: DuplicateKey
        var status: Status
        /// Counts for the hourly totals and the duplicate window.
        var holds: Bool { status != .failed }
    }

    /// The step amounts are accounted in (0.01 U or g), and the tolerance in steps.
    private static let step = 0.01
    private static let tolerance = 1e-6
    private static let rollingWindow: TimeInterval = 3600

    /// A limit in hundredths, rounded down.
    private static func limitHundredths(_ limit: Double) -> Int64 {
        Int64((limit * 100 + tolerance).rounded(.down))
    }

    /// An amount in hundredths, or nil when it is not a multiple of 0.01 (within tolerance) or
    /// rounds to zero. The caller has checked it is finite, positive and at most ~1e7.
    private static func hundredths(_ amount: Double) -> Int64? {
        let scaled = amount * 100
        let whole = scaled.rounded()
        guard abs(scaled - whole) <= tolerance, whole >= 1 else { return nil }
        return Int64(whole)
    }

    /// Stateless validation and per-command limits.
    private func check(_ command: LoopCommand, site: String) -> Result<Checked, RemoteCommandRefusal> {
        if site.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return .failure(.invalidSite) }
        func amount(_ value: Double, field: String, kind: String, limit: Int64, hourly: Int64) -> Result<Int64, RemoteCommandRefusal> {
            guard value.isFinite else { return .failure(.notFinite(field: field)) }
            guard value > 0 else { return .failure(.amountNotPositive(amount: value)) }
            guard limit > 0, hourly > 0 else { return .failure(.notConfigured(kind: kind)) }
            let limitValue = Double(limit) / 100
            if value > limitValue + Self.step / 2 { return .failure(.exceedsMaximum(amount: value, limit: limitValue)) }
            guard let h = Self.hundredths(value) else { return .failure(.tooPrecise(amount: value, step: Self.step)) }
            if h > limit { return .failure(.exceedsMaximum(amount: value, limit: limitValue)) }
            return .success(h)
        }
        switch command {
        case .bolus(let units):
            switch amount(units, field: "units", kind: "bolus", limit: limitBolus, hourly: limitBolusHour) {
            case .failure(let r): return .failure(r)
            case .success(let h):
                return .success(Checked(
                    command: .bolus(units: Double(h) / 100), kind: .bolus, hundredths: h,
                    key: DuplicateKey(kind: "bolus", hundredths: h)))
            }
        case .carbs(let grams, let hours, let start):
            if let hours {
                guard hours.isFinite else { return .failure(.notFinite(field: "absorptionHours")) }
                guard hours > 0, hours <= Self.maxAbsorptionHours else {
                    return .failure(.invalidParameter(field: "absorptionHours", value: hours))
                }
            }
            if let start, !start.timeIntervalSinceReferenceDate.isFinite { return .failure(.notFinite(field: "startDate")) }
            switch amount(grams, field: "grams", kind: "carbs", limit: limitCarbs, hourly: limitCarbsHour) {
            case .failure(let r): return .failure(r)
            case .success(let h):
                return .success(Checked(
                    command: .carbs(grams: Double(h) / 100, absorptionHours: hours, startDate: start), kind: .carbs,
                    hundredths: h, key: DuplicateKey(kind: "carbs", hundredths: h)))
            }
        case .override(let name, let minutes):
            if let minutes {
                guard minutes.isFinite else { return .failure(.notFinite(field: "durationMinutes")) }
                guard minutes > 0, minutes <= Self.maxOverrideMinutes else {
                    return .failure(.invalidParameter(field: "durationMinutes", value: minutes))
                }
            }
            guard !limits.allowedOverrides.isEmpty else { return .failure(.notConfigured(kind: "override")) }
            guard limits.allowedOverrides.contains(name) else {
                return .failure(.overrideNotAllowed(name: name, allowed: limits.allowedOverrides.sorted()))
            }
            return .success(Checked(command: command, kind: .other, hundredths: 0, key: DuplicateKey(kind: "override", name: name)))
        case .cancelOverride:
            guard !limits.allowedOverrides.isEmpty else { return .failure(.notConfigured(kind: "cancel_override")) }
            return .success(Checked(command: command, kind: .other, hundredths: 0, key: DuplicateKey(kind: "cancel_override")))
        case .closedLoop(let on), .autobolus(let on):
            guard limits.allowedToggles.contains(command.kind) else { return .failure(.notConfigured(kind: command.kind)) }
            return .success(Checked(command: command, kind: .other, hundredths: 0,
                                    key: DuplicateKey(kind: command.kind, name: on ? "on" : "off")))
        }
    }

    /// Checks against the site's recent commands (synchronous; pruning as it goes).
    private func stateRefusal(_ c: Checked, site: String, now: Date) -> RemoteCommandRefusal? {
        let keep = max(Self.rollingWindow, limits.minimumInterval, limits.duplicateWindow)
        sites[site]?.removeAll { $0.status != .inFlight && now.timeIntervalSince($0.time) >= keep }
        let records = sites[site] ?? []

        if limits.duplicateWindow > 0,
           let dup = records.last(where: { $0.holds && $0.key == c.key && now.timeIntervalSince($0.time) < limits.duplicateWindow }) {
            return .duplicate(of: dup.command, secondsAgo: max(0, now.timeIntervalSince(dup.time)))
        }
        if let latest = records.map(\.time).max() {
            let elapsed = now.timeIntervalSince(latest)
            if elapsed < limits.minimumInterval || elapsed < 0 {
                return .tooSoon(wait: limits.minimumInterval - elapsed)
            }
        }
        let hourly: Int64
        switch c.kind {
        case .bolus: hourly = limitBolusHour
        case .carbs: hourly = limitCarbsHour
        case .other: return nil
        }
        let used = records
            .filter { $0.holds && $0.kind == c.kind && now.timeIntervalSince($0.time) < Self.rollingWindow }
            .reduce(Int64(0)) { min(Int64.max / 2, $0 + $1.hundredths) }  // each ≤ Int64.max / 4
        if used > hourly - c.hundredths {
            return .exceedsHourlyTotal(amount: Double(c.hundredths) / 100, sentInHour: Double(used) / 100, limit: Double(hourly) / 100)
        }
        return nil
    }

    /// Reads the site's history once (concurrent first callers share one read).
    private func ensureLoaded(site: String, now: Date) async throws {
        if sites[site] != nil { return }
        guard let history else { sites[site] = []; return }
        let task: Task<[RemoteCommandRecord], any Error>
        if let running = loads[site] {
            task = running
        } else {
            let since = now.addingTimeInterval(-max(Self.rollingWindow, limits.minimumInterval, limits.duplicateWindow))
            task = Task { try await history.recentCommands(site: site, since: since) }
            loads[site] = task
        }
        let records: [RemoteCommandRecord]
        do {
            records = try await task.value
        } catch {
            if loads[site] == task { loads[site] = nil }
            throw error
        }
        if loads[site] == task { loads[site] = nil }
        if sites[site] == nil { sites[site] = records.map(Self.reservation(from:)) }
    }

    /// A reservation for a stored record. Amounts that cannot be read block the hourly total.
    private static func reservation(from r: RemoteCommandRecord) -> Reservation {
        let command = r.command.loopCommand ?? .cancelOverride
        let kind: Kind = r.command.kind == "bolus" ? .bolus : r.command.kind == "carbs" ? .carbs : .other
        var h: Int64 = 0
        if kind != .other {
            if let a = r.command.amount, a.isFinite, a > 0, a < 1e12 {
                h = Int64((a * 100).rounded(.up))
            } else {
                h = Int64.max / 4
            }
        }
        let toggle = r.command.active.map { $0 ? "on" : "off" }
        let key = kind == .other
            ? DuplicateKey(kind: r.command.kind, name: r.command.kind == "override" ? r.command.name : toggle)
            : DuplicateKey(kind: r.command.kind, hundredths: h)
        let status: Reservation.Status = switch r.status {
        case .inFlight, .sent: .sent
        case .failed: .failed
        }
        return Reservation(ticketID: r.ticketID, time: r.time, command: command, kind: kind, hundredths: h, key: key, status: status)
    }

    /// Audits a refusal and returns it.
    private func refuse(_ command: LoopCommand, _ reason: RemoteCommandRefusal, site: String, source: String, now: Date) async -> Decision {
        await write(AuditEntry(
            ticketID: nil, time: now, site: site, command: AuditCommand(command), source: source,
            verdict: .refused, reasonCode: reason.code, reason: reason.description,
            phase: .refused, detail: AuditCommand(command).description))
        return .refused(reason)
    }

    /// Appends an entry, remembering a failure.
    private func write(_ entry: AuditEntry) async {
        do { try await auditLog.append(entry) } catch { lastAuditError = String(describing: error) }
    }
}
