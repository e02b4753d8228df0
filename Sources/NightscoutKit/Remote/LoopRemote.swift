import Foundation

/// Remote control features that Loop knows but Nightscout's Remote 1.0 path does not carry.
public enum LoopRemoteFeature: String, Sendable, Hashable, CaseIterable {
    /// Switching closed loop on or off (Remote 2.0 `closedLoop` only).
    case closedLoop = "closed loop"
    /// Switching automatic bolus on or off (Remote 2.0 `autobolus` only).
    case autobolus = "autobolus"
}

/// Why a Loop remote command was not sent or was refused by Nightscout. No case carries a
/// secret, an OTP secret or a credential.
public enum LoopRemoteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The command has an amount the server or Loop would refuse (see `LoopCommand.validate()`).
    case invalidCommand(String)
    /// Nightscout answered 500 with one of the §5.1 strings (kept exactly as the server sent it),
    /// e.g. `Loop notification failed: LOOP_APNS_KEY not set.`; see `precondition`.
    case rejected(status: Int, message: String)
    /// The feature cannot be controlled through this server: cgm-remote-monitor serves only
    /// Remote 1.0 (bolus, carbs, overrides); closed loop and autobolus toggles exist only in the
    /// unverified Remote 2.0 protocol (spec §5.3). Callers return this when asked for them.
    case notSupportedByServer(LoopRemoteFeature)

    /// The §5.1 server precondition or failure behind a `.rejected` error.
    public enum Precondition: String, Sendable, Hashable, CaseIterable {
        /// `LOOP_APNS_KEY` is not configured on the site.
        case apnsKeyMissing
        /// `LOOP_APNS_KEY_ID` is not configured.
        case apnsKeyIDMissing
        /// `LOOP_DEVELOPER_TEAM_ID` is missing or not 10 characters.
        case developerTeamIDMissing
        /// The newest profile has no `loopSettings` (Loop has not uploaded one).
        case loopSettingsMissing
        /// `loopSettings.deviceToken` is missing.
        case deviceTokenMissing
        /// `loopSettings.bundleIdentifier` is missing.
        case bundleIdentifierMissing
        /// The server refused the carbs amount.
        case invalidCarbs
        /// The server refused the bolus amount.
        case invalidBolus
        /// The server does not know the event type.
        case unhandledEventType
        /// Apple's push service refused or failed the push.
        case apnsDeliveryFailed
        /// Some other 500 text.
        case other

        /// Classifies a §5.1 error string.
        public init(serverMessage m: String) {
            if m.contains("LOOP_APNS_KEY not set") { self = .apnsKeyMissing }
            else if m.contains("LOOP_APNS_KEY_ID not set") { self = .apnsKeyIDMissing }
            else if m.contains("LOOP_DEVELOPER_TEAM_ID not set") { self = .developerTeamIDMissing }
            else if m.contains("Could not find loopSettings") { self = .loopSettingsMissing }
            else if m.contains("Could not find deviceToken") { self = .deviceTokenMissing }
            else if m.contains("Could not find bundleIdentifier") { self = .bundleIdentifierMissing }
            else if m.hasPrefix("Loop remote carbs failed") { self = .invalidCarbs }
            else if m.hasPrefix("Loop remote bolus failed") { self = .invalidBolus }
            else if m.contains("Unhandled event type") { self = .unhandledEventType }
            else if m.hasPrefix("APNs delivery failed") { self = .apnsDeliveryFailed }
            else { self = .other }
        }
    }

    /// For `.rejected`, which precondition failed; nil otherwise.
    public var precondition: Precondition? {
        if case .rejected(_, let message) = self { return Precondition(serverMessage: message) }
        return nil
    }

    /// A human-readable summary (the server's own text for `.rejected`).
    public var description: String {
        switch self {
        case .invalidCommand(let m): return "Loop remote command is invalid: \(m)"
        case .rejected(let status, let m): return "Nightscout refused the Loop command (HTTP \(status)): \(m)"
        case .notSupportedByServer(let f):
            return "Switching \(f.rawValue) is not supported by this server: Nightscout (cgm-remote-monitor) relays only "
                + "Loop Remote 1.0 commands (bolus, carbs, overrides)"
        }
    }
}

/// What is known about a sent Loop command.
public enum LoopCommandOutcome: Sendable, Equatable, CustomStringConvertible {
    /// Nightscout accepted the command and handed it to Apple's push service; Loop's reaction
    /// has not been seen (yet).
    case delivered
    /// Loop enacted the command: the treatment it uploaded (bolus dose, `Carb Correction`,
    /// `Temporary Override`, or the override it ended).
    case confirmed(Treatment)
    /// Loop refused or failed the command; the reason is the error line of the `Note` it
    /// uploaded (e.g. `Missing OTP`).
    case failed(reason: String)
    /// Nothing was seen before the polling timeout (phone offline, push lost, or still pending).
    case unknown

    /// A short summary.
    public var description: String {
        switch self {
        case .delivered: return "delivered"
        case .confirmed(let t): return "confirmed (\(t.eventType?.rawValue ?? "treatment"))"
        case .failed(let reason): return "failed: \(reason)"
        case .unknown: return "unknown (no confirmation seen)"
        }
    }
}

/// A command Nightscout accepted, with what is needed to look for Loop's answer.
public struct LoopCommandReceipt: Sendable, Equatable {
    /// The command.
    public var command: LoopCommand
    /// When it was sent (the sender's clock).
    public var sentAt: Date
    /// The request body as sent (contains the one-time code, never the OTP secret).
    public var body: Data
    /// `_id`s of matching treatments that already existed before sending, with their `duration`
    /// then: they are ignored when polling unless their duration changed (Loop ends an override
    /// by shortening the existing document).
    public var preexisting: [String: Double?]
}

/// Sends Loop remote commands through Nightscout (`POST /api/v2/notifications/loop`, spec §5.1)
/// and watches the treatments for Loop's answer.
///
/// Loop has no response channel: on success it uploads what it did (a dose, a `Carb Correction`,
/// a `Temporary Override`); on failure it uploads a `Note` whose `enteredBy` is the action
/// (`Bolus Entry 1.5 U`) and whose `notes` start with the error. `outcome(of:)` polls v1
/// treatments (explicit date bounds around the send time) for either.
///
/// ```swift
/// let remote = LoopRemote(client: client)
/// let totp = try TOTP(url: loopOTPURL)
/// let outcome = try await remote.sendAndWait(.bolus(units: 1.5), otp: totp)
/// ```
public struct LoopRemote: Sendable {
    /// The Nightscout client (v1 credentials with `notifications:loop:push` and treatments read).
    public let client: NightscoutClient
    /// Seconds between two treatment polls.
    public var pollInterval: TimeInterval
    /// Polling gives up (`.unknown`) after this many seconds of waiting.
    public var timeout: TimeInterval
    /// Allowed clock difference between this device, the server and the phone, in seconds: the
    /// polled window starts this much before the send time.
    public var clockSkew: TimeInterval
    /// How far after "now" the polled window reaches (Loop stamps its uploads with its own
    /// clock), in seconds.
    public var lookahead: TimeInterval
    /// How far back a cancelled override may have started, in seconds (default 2 days).
    public var overrideLookback: TimeInterval
    /// The clock (send time, window bounds).
    public var now: @Sendable () -> Date
    /// Waits between polls; injectable so tests need no real waiting.
    public var sleep: @Sendable (TimeInterval) async throws -> Void

    /// Creates a sender.
    /// - Parameters:
    ///   - client: the Nightscout client.
    ///   - pollInterval: seconds between polls (default 15).
    ///   - timeout: seconds of polling before `.unknown` (default 300).
    ///   - clockSkew: allowed clock difference in seconds (default 120).
    ///   - lookahead: seconds after now included in the window (default 3600).
    ///   - now: the clock (default the system clock).
    ///   - sleep: the wait between polls (default `Task.sleep`).
    public init(client: NightscoutClient, pollInterval: TimeInterval = 15, timeout: TimeInterval = 300,
                clockSkew: TimeInterval = 120, lookahead: TimeInterval = 3600,
                now: @escaping @Sendable () -> Date = { Date() },
                sleep: @escaping @Sendable (TimeInterval) async throws -> Void = { seconds in
                    try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
                }) {
        self.client = client
        self.pollInterval = pollInterval
        self.timeout = timeout
        self.clockSkew = clockSkew
        self.lookahead = lookahead
        self.overrideLookback = 2 * 86_400
        self.now = now
        self.sleep = sleep
    }

    /// The `POST /api/v2/notifications/loop` request for `body` with the v1 headers.
    public func request(body: Data) -> NightscoutRequest {
        let configuration = client.configuration
        var headers = V1Query.headers(configuration)
        headers.append(.init(name: "Content-Type", value: "application/json"))
        return NightscoutRequest(method: "POST", url: configuration.url(path: "/api/v2/notifications/loop"),
                                 headers: headers, body: body)
    }

    /// The error to return when asked to switch closed loop or autobolus (not commands on this
    /// server, spec §5.3).
    public static func unsupported(_ feature: LoopRemoteFeature) -> LoopRemoteError { .notSupportedByServer(feature) }

    /// Sends `command`. The one-time code is `otp.code(at: now)` for bolus and carbs (Loop
    /// requires it and answers "Missing OTP" without one; overrides need none and get none).
    /// - Parameters:
    ///   - command: the command.
    ///   - otp: the generator made from Loop's `otpauth://` URL.
    ///   - notes: free text shown in Loop's notification.
    ///   - enteredBy: who sends it (shown in Loop's notification).
    ///   - reasonDisplay: an override's display text (default its name).
    ///   - now: the send time (default the sender's clock).
    /// - Returns: the receipt (outcome `.delivered`) to pass to `outcome(of:)`.
    /// - Throws: `LoopRemoteError.invalidCommand`, `LoopRemoteError.rejected` for a 500 with the
    ///   server's text, `NightscoutError` for 401 and other failures.
    public func send(_ command: LoopCommand, otp: TOTP?, notes: String? = nil, enteredBy: String? = nil,
                     reasonDisplay: String? = nil, now sendTime: Date? = nil) async throws -> LoopCommandReceipt {
        try command.validate()
        let sentAt = sendTime ?? now()
        let code = command.needsOTP ? otp?.code(at: sentAt) : nil
        let body = command.notificationBody(otp: code, notes: notes, enteredBy: enteredBy,
                                            reasonDisplay: reasonDisplay, now: sentAt)
        let preexisting = try await candidates(for: command, sentAt: sentAt)
        let response = try await client.send(request(body: body))
        switch response.status {
        case 200...299: break
        case 500: throw LoopRemoteError.rejected(status: 500, message: response.bodyText())
        default: try NightscoutResponse.check(response)
        }
        var known: [String: Double?] = [:]
        for t in preexisting { if let id = t.common.id { known[id] = .some(t.duration) } }
        return LoopCommandReceipt(command: command, sentAt: sentAt, body: body, preexisting: known)
    }

    /// Sends `command`, then polls for Loop's answer (see `send` and `outcome(of:)`).
    public func sendAndWait(_ command: LoopCommand, otp: TOTP?, notes: String? = nil, enteredBy: String? = nil,
                            reasonDisplay: String? = nil, now sendTime: Date? = nil) async throws -> LoopCommandOutcome {
        let receipt = try await send(command, otp: otp, notes: notes, enteredBy: enteredBy,
                                     reasonDisplay: reasonDisplay, now: sendTime)
        return try await outcome(of: receipt)
    }

    /// Polls every `pollInterval` until Loop's success upload or failure note appears, or
    /// `timeout` seconds of polling have passed (`.unknown`). The first poll is immediate.
    public func outcome(of receipt: LoopCommandReceipt) async throws -> LoopCommandOutcome {
        var waited: TimeInterval = 0
        while true {
            let result = try await check(receipt)
            if result != .delivered { return result }
            guard waited < timeout else { return .unknown }
            let step = max(0, min(pollInterval, timeout - waited))
            try await sleep(step)
            waited += max(step, 1e-3)
        }
    }

    /// One poll: `.confirmed` or `.failed` when Loop's answer is in the treatments, else
    /// `.delivered`. A success upload wins over a failure note (never report a delivered bolus as
    /// failed, which could lead to a second bolus).
    public func check(_ receipt: LoopCommandReceipt) async throws -> LoopCommandOutcome {
        let found = try await candidates(for: receipt.command, sentAt: receipt.sentAt)
            .filter { t in
                guard let id = t.common.id, let before = receipt.preexisting[id] else { return true }
                return before != t.duration
            }
        let latest = max(now(), receipt.sentAt) + lookahead
        if let done = found.first(where: {
            LoopRemote.isConfirmation($0, of: receipt.command, sentAt: receipt.sentAt, skew: clockSkew, latest: latest)
        }) {
            return .confirmed(done)
        }
        if let note = found.first(where: { LoopRemote.isFailureNote($0, of: receipt.command) }) {
            let text = note.notes ?? ""
            let reason = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
            return .failed(reason: reason.isEmpty ? "Loop reported an error" : reason)
        }
        return .delivered
    }

    // MARK: - Matching

    /// Treatments in the window where Loop's answer to `command` would be.
    func candidates(for command: LoopCommand, sentAt: Date) async throws -> [Treatment] {
        var from = sentAt - clockSkew
        if case .carbs(_, _, let start?) = command { from = min(from, start - clockSkew) }
        let through = max(now(), sentAt) + lookahead
        var found = try await client.treatments(try V1Query.treatments(from: from, through: through, count: 1000))
        if case .cancelOverride = command {
            // The override Loop ends may have started long before: look further back for overrides only.
            let older = try await client.treatments(try V1Query.treatments(
                eventType: .temporaryOverride, from: min(sentAt - overrideLookback, from), through: from, count: 1000))
            let seen = Set(found.compactMap(\.common.id))
            found += older.filter { $0.common.id.map { !seen.contains($0) } ?? true }
        }
        return found.filter { LoopRemote.isConfirmationShape($0, of: command) || LoopRemote.isFailureNote($0, of: command) }
    }

    /// Whether `t` has the shape of Loop's success upload for `command` (ignoring time).
    static func isConfirmationShape(_ t: Treatment, of command: LoopCommand) -> Bool {
        switch command {
        case .bolus(let units):
            guard let insulin = t.insulin, abs(insulin - units) <= 0.05 + 1e-9 else { return false }
            return t.eventType != .note
        case .carbs(let grams, _, _):
            guard let carbs = t.carbs, abs(carbs - grams) <= 0.5 else { return false }
            return t.eventType != .note
        case .override(let name, _):
            return t.eventType == .temporaryOverride && (t.reason == name || t.extra["reasonDisplay"]?.stringValue == name)
        case .cancelOverride:
            return t.eventType == .temporaryOverride || t.eventType == .temporaryOverrideCancel
        case .closedLoop, .autobolus:
            return false
        }
    }

    /// Whether `t` is Loop's success upload for `command` sent at `sentAt`.
    static func isConfirmation(_ t: Treatment, of command: LoopCommand, sentAt: Date, skew: TimeInterval, latest: Date) -> Bool {
        guard isConfirmationShape(t, of: command), let time = t.time?.date else { return false }
        switch command {
        case .bolus, .override:
            return time >= sentAt - skew
        case .carbs(_, _, let start):
            if let start { return abs(time.timeIntervalSince(start)) <= skew || time >= sentAt - skew }
            return time >= sentAt - skew
        case .cancelOverride:
            if t.eventType == .temporaryOverrideCancel { return time >= sentAt - skew }
            // Loop ends the running override: its duration is cut to about the cancel time.
            guard time <= sentAt + skew, let minutes = t.duration else { return false }
            let end = time + minutes * 60
            return end >= sentAt - skew && end <= latest
        case .closedLoop, .autobolus:
            return false
        }
    }

    /// Whether `t` is Loop's failure `Note` for `command` (its `enteredBy` is the action
    /// description, or `Loop Remote Action Error`).
    static func isFailureNote(_ t: Treatment, of command: LoopCommand) -> Bool {
        guard t.eventType == .note, let by = t.enteredBy else { return false }
        if by == "Loop Remote Action Error" { return true }
        func amount(after prefix: String, unit: String) -> Double? {
            guard by.hasPrefix(prefix + " "), by.hasSuffix(" " + unit) else { return nil }
            return Double(by.dropFirst(prefix.count + 1).dropLast(unit.count + 1).trimmingCharacters(in: .whitespaces))
        }
        switch command {
        case .bolus(let units): return amount(after: "Bolus Entry", unit: "U").map { abs($0 - units) < 0.0005 } ?? false
        case .carbs(let grams, _, _): return amount(after: "Carb Entry", unit: "g").map { abs($0 - grams) < 0.05 } ?? false
        case .override(let name, _): return by == "Override \(name)"
        case .cancelOverride: return by == "Cancel Override"
        case .closedLoop, .autobolus: return by == command.loopActionDescription
        }
    }
}
