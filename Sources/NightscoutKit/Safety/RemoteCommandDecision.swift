import Foundation

/// Permission to send one Loop remote command, handed out by `RemoteCommandGuard.authorize`.
///
/// Only the guard creates tickets. A ticket's amount is reserved in the site's rolling-hour
/// totals from the moment it is issued; report the send's result with
/// `RemoteCommandGuard.complete(_:outcome:now:)`.
public struct RemoteCommandTicket: Sendable, Hashable, Identifiable {
    /// The ticket's identifier; every audit entry of this command carries it.
    public let id: UUID
    /// The site the command is for (the budget's key, `RemoteCommandSite.key(for:)` in the host).
    public let site: String
    /// The other keys the command was reserved under (the site's other spellings' keys, the Loop
    /// device's key): what receives it, for its budget and its one-time code.
    public let keys: [String]
    /// The command to send, with amounts normalized to the 0.01 step.
    public let command: LoopCommand
    /// The script (or other caller) that asked for it.
    public let source: String
    /// When it was authorized (the `now` passed to `authorize`).
    public let authorizedAt: Date

    init(id: UUID, site: String, keys: [String] = [], command: LoopCommand, source: String, authorizedAt: Date) {
        self.id = id
        self.site = site
        self.keys = keys
        self.command = command
        self.source = source
        self.authorizedAt = authorizedAt
    }
}

/// Why no one-time code was given for a command (`RemoteCommandGuard.oneTimeCode`); the
/// command is not sent.
public enum OneTimeCodeRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// This period's code was already sent to the pump, and the next comes after the command's wait.
    case codeInUse(nextIn: TimeInterval, wait: TimeInterval)
    /// The ledger could not be read or written.
    case ledgerUnavailable(String)
    /// The wait was cancelled.
    case cancelled

    /// What the script and the audit log are told.
    public var description: String {
        switch self {
        case .codeInUse(let next, let wait):
            return "not sent: this period's one-time code was already used for this pump (Loop refuses a code twice); "
                + "the next code comes in \(Int(next.rounded(.up))) s, beyond the command's wait of \(Int(wait)) s"
        case .ledgerUnavailable(let why): return "not sent: the used one-time codes cannot be read: \(why)"
        case .cancelled: return "not sent: cancelled while waiting for the next one-time code"
        }
    }
}

/// The guard's answer to one command.
public enum RemoteCommandDecision: Sendable, Equatable {
    /// The command may be sent now; report the result with `complete`.
    case allowed(RemoteCommandTicket)
    /// The command must not be sent, and why.
    case refused(RemoteCommandRefusal)

    /// The ticket, when allowed.
    public var ticket: RemoteCommandTicket? {
        if case .allowed(let t) = self { return t }
        return nil
    }

    /// The reason, when refused.
    public var refusal: RemoteCommandRefusal? {
        if case .refused(let r) = self { return r }
        return nil
    }
}

/// Why a remote command was refused. `description` is the human text written to the audit log;
/// `code` is a stable identifier (the case name).
public enum RemoteCommandRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The site name is empty.
    case invalidSite
    /// An amount or parameter is NaN or infinite.
    case notFinite(field: String)
    /// The amount is zero or negative.
    case amountNotPositive(amount: Double)
    /// The amount is not a positive multiple of `step` (0.01), e.g. 0.005 or 1e-300.
    case tooPrecise(amount: Double, step: Double)
    /// An optional parameter (carb absorption hours, override minutes) is not positive or above
    /// its sanity maximum (`RemoteCommandGuard.maxAbsorptionHours`, `.maxOverrideMinutes`).
    case invalidParameter(field: String, value: Double)
    /// The command kind is disabled by configuration (its maximum is 0, or no override names).
    case notConfigured(kind: String)
    /// The amount is above the single-command maximum.
    case exceedsMaximum(amount: Double, limit: Double)
    /// The amount plus the sent and in-flight total of the last 60 minutes is above the hourly
    /// limit.
    case exceedsHourlyTotal(amount: Double, sentInHour: Double, limit: Double)
    /// Another command of the site was sent or attempted less than `minimumInterval` ago; `wait`
    /// is the seconds left.
    case tooSoon(wait: TimeInterval)
    /// An identical command was sent or is in flight, `secondsAgo` seconds ago.
    case duplicate(of: LoopCommand, secondsAgo: TimeInterval)
    /// The override preset is not in the allowed list.
    case overrideNotAllowed(name: String, allowed: [String])
    /// Every limit passed, but the guard is in dry-run mode (`live` false): nothing is sent.
    case dryRun(wouldSend: LoopCommand)
    /// The command ledger could not be read or written, so limits cannot be checked.
    case historyUnavailable(String)
    /// The audit log could not record the attempt, so the command is not sent.
    case auditUnavailable(String)

    /// A stable identifier: the case name (`exceedsHourlyTotal`, `tooSoon`, …).
    public var code: String {
        switch self {
        case .invalidSite: return "invalidSite"
        case .notFinite: return "notFinite"
        case .amountNotPositive: return "amountNotPositive"
        case .tooPrecise: return "tooPrecise"
        case .invalidParameter: return "invalidParameter"
        case .notConfigured: return "notConfigured"
        case .exceedsMaximum: return "exceedsMaximum"
        case .exceedsHourlyTotal: return "exceedsHourlyTotal"
        case .tooSoon: return "tooSoon"
        case .duplicate: return "duplicate"
        case .overrideNotAllowed: return "overrideNotAllowed"
        case .dryRun: return "dryRun"
        case .historyUnavailable: return "historyUnavailable"
        case .auditUnavailable: return "auditUnavailable"
        }
    }

    /// The human explanation, e.g. `1.5 more would make 5.5 in the last hour (limit 5)`.
    public var description: String {
        func n(_ d: Double) -> String { formatAmount(d) }
        switch self {
        case .invalidSite: return "no site given"
        case .notFinite(let field): return "\(field) is not a finite number"
        case .amountNotPositive(let amount): return "amount \(n(amount)) is not positive"
        case .tooPrecise(let amount, let step):
            return "amount \(amount) is not a positive multiple of \(n(step))"
        case .invalidParameter(let field, let value): return "\(field) \(n(value)) is out of range"
        case .notConfigured(let kind): return "\(kind) commands are not enabled in the host configuration"
        case .exceedsMaximum(let amount, let limit):
            return "amount \(n(amount)) is above the maximum of \(n(limit)) per command"
        case .exceedsHourlyTotal(let amount, let sent, let limit):
            return "\(n(amount)) more would make \(n(sent + amount)) in the last hour "
                + "(already \(n(sent)), limit \(n(limit)))"
        case .tooSoon(let wait):
            return "too soon after the previous command: wait \(n((wait * 10).rounded(.up) / 10)) s"
        case .duplicate(let previous, let ago):
            return "duplicate of \(AuditCommand(previous)) sent \(n((ago * 10).rounded(.down) / 10)) s ago"
        case .overrideNotAllowed(let name, let allowed):
            return "override \"\(name)\" is not allowed (allowed: "
                + (allowed.isEmpty ? "none" : allowed.joined(separator: ", ")) + ")"
        case .dryRun(let command): return "dry run: would send \(AuditCommand(command))"
        case .historyUnavailable(let message): return "command history unavailable: \(message)"
        case .auditUnavailable(let message): return "audit log unavailable: \(message)"
        }
    }
}

/// The result of sending an authorized command, reported through `RemoteCommandGuard.complete`.
public enum RemoteCommandOutcome: Sendable, Equatable {
    /// The server accepted the command (`200 OK`).
    case sent(detail: String = "")
    /// The command was never sent: it did not leave this host (declined at the terminal, no OTP
    /// configured). Releases the reservation in the hourly total and the duplicate window; still
    /// counts for the minimum interval. Never use it for evidence that arrives after a send (an
    /// HTTP error answer, Loop's failure note, a Remote 2.0 `Error`): a sent command counts.
    case failed(detail: String)
    /// The request left this host but it is unknown whether the command reached Loop (a
    /// timeout, or the server answered with an error). Treated exactly like `sent`.
    case indeterminate(detail: String)
}

/// Formats an amount without a trailing `.0` (`1`, `1.5`, `0.05`, `1.0000000001`).
/// Never traps: NaN, infinities and huge values print as `String(d)`; float noise such as
/// `0.30000000000000004` prints as `0.3`.
func formatAmount(_ d: Double) -> String {
    guard d.isFinite, abs(d) < 1e15 else { return String(d) }
    if d == d.rounded() { return String(Int64(d)) }
    let hundredths = (d * 100).rounded()
    if abs(d * 100 - hundredths) < 1e-9 {
        var s = String(format: "%.2f", hundredths / 100)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }
    return String(d)
}
