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
/// * **Reservation**: the check and the reservation happen in one exclusive transaction of the
///   `RemoteCommandLedger` (the host's state database), keyed by the site: every guard, process,
///   profile and worker using that ledger shares one budget per site, and concurrent callers
///   cannot overshoot. An allowed ticket's amount counts from the moment it is issued; a crash
///   between reservation and send leaves it counted (fail-safe).
/// * **Rolling hour**: a command counts while less than 3600 s have passed since its time (its
///   authorization, moved to the send report if later). Commands "in the future" (the clock went
///   back) count too.
/// * **Sent means counted**: once a command may have left this host it counts against every
///   budget in full, whatever the outcome evidence says (a Loop failure note, a Remote 2.0
///   `Error`, an HTTP error answer: a script can forge the first two, and the third may follow a
///   delivery). Only `RemoteCommandOutcome.failed` (never sent: declined at the terminal, no OTP)
///   and a person's release (`lookout remote release`, audit phase `released`) give the hourly
///   budget and the duplicate window back; both still count for the minimum interval, so a
///   failing script cannot retry faster than `minimumInterval`. A ticket never completed counts
///   as sent.
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
/// * **Dry run** (`live` false): a command passing every limit (counting the ledger's real
///   commands) is refused with `dryRun` and audited as `dry-run`. It is counted in this guard's
///   memory as if sent (so a dry run shows what live mode would do), but never written as an
///   attempt, so it never counts for a live guard or after a restart.
/// * **Ledger failures**: if the ledger cannot be read or written, nothing is reserved and the
///   command is refused (`historyUnavailable`).
public actor RemoteCommandGuard {
    /// The guard's decision type.
    public typealias Decision = RemoteCommandDecision

    /// The limits in force (fixed for the guard's lifetime).
    public nonisolated let limits: TherapyLimits
    /// The text of the last audit append that failed, if any.
    public private(set) var lastAuditError: String?

    private let ledger: any RemoteCommandLedger
    private let limitBolus: Int64, limitCarbs: Int64, limitBolusHour: Int64, limitCarbsHour: Int64
    /// Dry-run commands by site (counted for later dry runs of this guard only).
    private var simulated: [String: [Reservation]] = [:]
    /// Tickets this guard issued whose send has not been reported yet.
    private var inFlight: Set<UUID> = []

    /// A guard enforcing `limits`, reserving against and auditing to `ledger`. Throws when
    /// `limits` are invalid.
    public init(limits: TherapyLimits, ledger: any RemoteCommandLedger) throws(TherapyLimitsError) {
        self.limits = try limits.validated()
        self.ledger = ledger
        limitBolus = Self.limitHundredths(limits.maxBolusUnits)
        limitCarbs = Self.limitHundredths(limits.maxCarbsGrams)
        limitBolusHour = Self.limitHundredths(limits.maxBolusUnitsPerHour)
        limitCarbsHour = Self.limitHundredths(limits.maxCarbsGramsPerHour)
    }

    /// A guard using one `InMemoryAuditLog` as its ledger.
    public init(limits: TherapyLimits, log: InMemoryAuditLog) throws(TherapyLimitsError) {
        try self.init(limits: limits, ledger: log)
    }

    /// Decides whether `command` may be sent to `site` now, on behalf of `source` (the script
    /// name), reserving it when allowed. Every call writes exactly one audit entry: `attempted`
    /// (allowed), `refused`, or `dry-run`.
    /// `keys` are the other keys of what receives the command (`RemoteCommandSite.keys(for:)`,
    /// the Loop device's `deviceKey`): the command shares the budget of every command reserved
    /// under `site` or any of them, and is reserved under all of them.
    /// `now` defaults to the clock read inside the guard, so concurrent callers are ordered as
    /// the guard serves them (a time read before the call could look like a clock going back).
    public func authorize(_ command: LoopCommand, site: String, keys givenKeys: [String] = [], source: String = "",
                          now given: Date? = nil) async -> Decision {
        let keys = Array(Set(givenKeys).subtracting([site])).sorted()
        let checked: Checked
        switch check(command, site: site) {
        case .failure(let reason): return await refuse(command, reason, site: site, source: source, now: given ?? Date())
        case .success(let c): checked = c
        }
        let window = max(Self.rollingWindow, limits.minimumInterval, limits.duplicateWindow)
        let live = limits.live
        if !live {
            let now = given ?? Date()
            simulated[site]?.removeAll { now.timeIntervalSince($0.time) >= window }
        }
        let dryRuns = live ? [] : simulated[site] ?? []
        let rules = Rules(limits: limits, bolusHour: limitBolusHour, carbsHour: limitCarbsHour)
        let id = UUID()
        let outcome: Reserved
        do {
            // The check and the reservation: one exclusive ledger transaction.
            outcome = try await ledger.reserve(site: site, keys: keys, window: window, now: given) { records, now in
                let existing = records.map(Self.reservation(from:)) + dryRuns
                if let reason = rules.refusal(checked, existing: existing, now: now) {
                    return (AuditEntry(
                        ticketID: nil, time: now, site: site, command: AuditCommand(command), source: source,
                        verdict: .refused, reasonCode: reason.code, reason: reason.description,
                        phase: .refused, detail: AuditCommand(command).description), Reserved(refusal: reason, time: now))
                }
                guard live else {
                    let reason = RemoteCommandRefusal.dryRun(wouldSend: checked.command)
                    return (AuditEntry(
                        ticketID: nil, time: now, site: site, command: AuditCommand(command), source: source,
                        verdict: .refused, reasonCode: reason.code, reason: reason.description,
                        phase: .dryRun, detail: AuditCommand(checked.command).description), Reserved(refusal: reason, time: now))
                }
                return (AuditEntry(
                    ticketID: id, time: now, site: site, command: AuditCommand(checked.command), source: source,
                    verdict: .allowed, phase: .attempted, detail: AuditCommand(checked.command).description),
                        Reserved(refusal: nil, time: now))
            }
        } catch {
            lastAuditError = String(describing: error)
            return await refuse(command, .historyUnavailable(String(describing: error)), site: site, source: source,
                                now: given ?? Date())
        }
        switch outcome.refusal {
        case .dryRun?:
            simulated[site, default: []].append(Reservation(
                ticketID: id, time: outcome.time, command: checked.command, kind: checked.kind,
                hundredths: checked.hundredths, key: checked.key, status: .sent))
            return .refused(.dryRun(wouldSend: checked.command))
        case let reason?:
            return .refused(reason)
        case nil:
            inFlight.insert(id)
            return .allowed(RemoteCommandTicket(id: id, site: site, keys: keys, command: checked.command, source: source,
                                                authorizedAt: outcome.time))
        }
    }

    /// Records the result of sending `ticket`'s command and audits it (`sent`, `failed` or
    /// `indeterminate`). Only `failed` (never sent) gives the hourly and duplicate reservation
    /// back (see the type's rules). Returns false, changing and auditing nothing, when the ticket
    /// is not in flight (already completed, or not issued by this guard).
    @discardableResult
    public func complete(_ ticket: RemoteCommandTicket, outcome: RemoteCommandOutcome, now: Date? = nil) async -> Bool {
        let now = now ?? Date()
        guard inFlight.remove(ticket.id) != nil else { return false }
        let phase: AuditPhase
        let detail: String
        switch outcome {
        case .sent(let d): phase = .sent; detail = d
        case .failed(let d): phase = .failed; detail = d
        case .indeterminate(let d): phase = .indeterminate; detail = d
        }
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
    /// `app-error`: a Remote 2.0 state `Error`, or a Remote 1.0 failure note). Changes no limit:
    /// the command keeps counting, since a script can write such evidence itself.
    public func reportAppError(_ ticket: RemoteCommandTicket, detail: String, now: Date? = nil) async {
        await write(AuditEntry(
            ticketID: ticket.id, time: now ?? Date(), site: ticket.site, command: AuditCommand(ticket.command),
            source: ticket.source, verdict: .allowed, phase: .appError,
            detail: detail.isEmpty ? AuditCommand(ticket.command).description : detail))
    }

    /// The one-time code to send `ticket`'s command with: the code of the current TOTP period
    /// when no command to the same pump (its site and keys) has used it, claimed in the ledger so
    /// that no process sends it again; otherwise the next period's code, waiting for it when it
    /// comes within `wait` seconds. Loop refuses a code it has seen, while the command still
    /// counts against the budget, so a code is never sent twice.
    /// - Returns: the code and the time it is for (send it with that time), or why not: the
    ///   code is in use and the next one comes later than `wait`, or the ledger failed.
    public func oneTimeCode(for ticket: RemoteCommandTicket, otp: TOTP, wait: TimeInterval,
                            clock: @Sendable () -> Date = { Date() }) async -> Result<(code: String, time: Date), OneTimeCodeRefusal> {
        let started = clock()
        let pumps = [ticket.site] + ticket.keys
        while true {
            let now = clock()
            let counter = otp.counter(at: now)
            let code = otp.code(counter: counter)
            do {
                if try await ledger.claimOneTimeCode(code, counter: counter, pumps: pumps, now: now) { return .success((code, now)) }
            } catch {
                lastAuditError = String(describing: error)
                return .failure(.ledgerUnavailable(String(describing: error)))
            }
            // The next period's code, just after it starts.
            let next = Date(timeIntervalSince1970: TimeInterval(counter + 1) * TimeInterval(otp.period) + 0.05)
            let waited = next.timeIntervalSince(started)
            guard waited <= wait else { return .failure(.codeInUse(nextIn: max(0, next.timeIntervalSince(now)), wait: wait)) }
            try? await Task.sleep(for: .seconds(max(0.01, next.timeIntervalSince(now))))
            if Task.isCancelled { return .failure(.cancelled) }
        }
    }

    /// The longest carb absorption time accepted, in hours (longer: `invalidParameter`).
    public static let maxAbsorptionHours: Double = 24
    /// The longest override duration accepted, in minutes (one week; longer: `invalidParameter`).
    public static let maxOverrideMinutes: Double = 7 * 24 * 60

    // MARK: - Internals

    private enum Kind: Sendable { case bolus, carbs, other }

    /// What the ledger transaction decided (nil refusal: reserved).
    private struct Reserved: Sendable {
        var refusal: RemoteCommandRefusal?
        var time: Date
    }

    private struct DuplicateKey: Hashable, Sendable {
        var kind: String
        var hundredths: Int64?
        var name: String?
    }

    private struct Checked: Sendable {
        var command: LoopCommand
        var kind: Kind
        var hundredths: Int64
        var key: DuplicateKey
    }

    private struct Reservation: Sendable {
        enum Status: Sendable { case inFlight, sent, failed, released }
        var ticketID: UUID
        var time: Date
        var command: LoopCommand
        var kind: Kind
        var hundredths: Int64
        var key: DuplicateKey
        var status: Status
        /// Counts for the hourly totals and the duplicate window.
        var holds: Bool { status != .failed && status != .released }
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

    /// The rules that depend on the site's recent commands (evaluated inside the ledger's
    /// transaction, so they are a value that needs nothing of the actor).
    private struct Rules: Sendable {
        var limits: TherapyLimits
        var bolusHour: Int64
        var carbsHour: Int64

        /// Why `c` must be refused given the site's `existing` commands at `now`, or nil.
        func refusal(_ c: Checked, existing records: [Reservation], now: Date) -> RemoteCommandRefusal? {
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
            case .bolus: hourly = bolusHour
            case .carbs: hourly = carbsHour
            case .other: return nil
            }
            let used = records
                .filter { $0.holds && $0.kind == c.kind && now.timeIntervalSince($0.time) < RemoteCommandGuard.rollingWindow }
                .reduce(Int64(0)) { min(Int64.max / 2, $0 + $1.hundredths) }  // each ≤ Int64.max / 4
            if used > hourly - c.hundredths {
                return .exceedsHourlyTotal(amount: Double(c.hundredths) / 100, sentInHour: Double(used) / 100, limit: Double(hourly) / 100)
            }
            return nil
        }
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
        case .inFlight: .inFlight
        case .sent: .sent
        case .failed: .failed
        case .released: .released
        }
        return Reservation(ticketID: r.ticketID, time: r.time, command: command, kind: kind, hundredths: h, key: key, status: status)
    }

    /// Audits a refusal (outside the ledger transaction: nothing is reserved) and returns it.
    private func refuse(_ command: LoopCommand, _ reason: RemoteCommandRefusal, site: String, source: String, now: Date) async -> Decision {
        await write(AuditEntry(
            ticketID: nil, time: now, site: site, command: AuditCommand(command), source: source,
            verdict: .refused, reasonCode: reason.code, reason: reason.description,
            phase: .refused, detail: AuditCommand(command).description))
        return .refused(reason)
    }

    /// Appends an entry, remembering a failure.
    private func write(_ entry: AuditEntry) async {
        do { try await ledger.append(entry) } catch { lastAuditError = String(describing: error) }
    }
}
