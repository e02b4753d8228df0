import Foundation

/// Where a Remote 2.0 command stands (spec §5.3). The receiving app moves it from `pending`
/// through `inProgress` to `success` or `error`.
public enum CommandState: String, Sendable, Hashable, CaseIterable, Codable {
    /// Stored on the site, not picked up yet.
    case pending = "Pending"
    /// The receiving app is working on it.
    case inProgress = "InProgress"
    /// The receiving app enacted it.
    case success = "Success"
    /// The receiving app refused or failed it (`CommandStatus.message` says why).
    case error = "Error"

    /// Whether the state is final (`success` or `error`).
    public var isFinal: Bool { self == .success || self == .error }
}

/// A Remote 2.0 command's status: its state and the receiving app's message (`""` when none).
public struct CommandStatus: Sendable, Hashable, Codable {
    /// The state.
    public var state: CommandState
    /// The receiving app's message (e.g. `Password 287082 has expired`), or `""`.
    public var message: String

    /// A status with the given fields.
    public init(state: CommandState, message: String = "") {
        self.state = state
        self.message = message
    }
}

/// What a Remote 2.0 command asks for (spec §5.3, Swift's synthesized enum encoding: one key
/// named after the case). Times are seconds, as on the wire.
public enum RemoteAction: Sendable, Hashable {
    /// `{"bolus":{"amountInUnits":1.5}}`.
    case bolus(amountInUnits: Double)
    /// `{"carbs":{"amountInGrams":20,"absorptionTime":10800,"startDate":"…"}}` (absorption time
    /// in seconds and start date optional).
    case carbs(amountInGrams: Double, absorptionTime: TimeInterval?, startDate: Date?)
    /// `{"override":{"name":"Exercise","durationTime":3600,"remoteAddress":""}}` (duration in
    /// seconds optional: nil runs until cancelled).
    case override(name: String, durationTime: TimeInterval?, remoteAddress: String)
    /// `{"cancelOverride":{"remoteAddress":""}}`.
    case cancelOverride(remoteAddress: String)
    /// `{"closedLoop":{"active":true}}`.
    case closedLoop(active: Bool)
    /// `{"autobolus":{"active":false}}`.
    case autobolus(active: Bool)

    /// The action for a guarded `LoopCommand` (hours and minutes become seconds).
    public init(_ command: LoopCommand, remoteAddress: String = "") {
        switch command {
        case .bolus(let units): self = .bolus(amountInUnits: units)
        case .carbs(let grams, let hours, let start):
            self = .carbs(amountInGrams: grams, absorptionTime: hours.map { $0 * 3600 }, startDate: start)
        case .override(let name, let minutes):
            self = .override(name: name, durationTime: minutes.map { $0 * 60 }, remoteAddress: remoteAddress)
        case .cancelOverride: self = .cancelOverride(remoteAddress: remoteAddress)
        case .closedLoop(let on): self = .closedLoop(active: on)
        case .autobolus(let on): self = .autobolus(active: on)
        }
    }

    /// The same command as a `LoopCommand` (what the guard checks and the audit log shows).
    public var loopCommand: LoopCommand {
        switch self {
        case .bolus(let units): return .bolus(units: units)
        case .carbs(let grams, let seconds, let start):
            return .carbs(grams: grams, absorptionHours: seconds.map { $0 / 3600 }, startDate: start)
        case .override(let name, let seconds, _): return .override(name: name, durationMinutes: seconds.map { $0 / 60 })
        case .cancelOverride: return .cancelOverride
        case .closedLoop(let on): return .closedLoop(active: on)
        case .autobolus(let on): return .autobolus(active: on)
        }
    }

    /// The wire key (`bolus`, `carbs`, `override`, `cancelOverride`, `closedLoop`, `autobolus`).
    public var key: String {
        switch self {
        case .bolus: return "bolus"
        case .carbs: return "carbs"
        case .override: return "override"
        case .cancelOverride: return "cancelOverride"
        case .closedLoop: return "closedLoop"
        case .autobolus: return "autobolus"
        }
    }
}

/// A Loop Remote 2.0 command as stored on the site (`/api/v2/remotecommands`, spec §5.3; seed
/// 000's `RemoteCommand`). `id` is the server's `_id` (nil before it is stored).
///
/// `encoded()` writes the exact §5.3 body, keys in its order:
/// ```json
/// {"version":"2.0","createdDate":"2023-03-19T12:00:00.000-0500","sendNotification":true,
///  "otp":"287082","status":{"state":"Pending","message":""},"action":{"bolus":{"amountInUnits":1.5}}}
/// ```
public struct RemoteCommand: Sendable, Hashable, CustomStringConvertible {
    /// The server's `_id`, once stored.
    public var id: String?
    /// The protocol version, `"2.0"`.
    public var version: String
    /// When the sender created it; the receiving app checks the OTP against this time.
    public var createdDate: Date
    /// What to do.
    public var action: RemoteAction
    /// Whether the server should push a notification to the receiving app.
    public var sendNotification: Bool
    /// Where it stands.
    public var status: CommandStatus
    /// The one-time code for `createdDate` (`""` when none). Never the OTP secret.
    public var otp: String

    /// A command (default: version `2.0`, notification on, `Pending` with no message).
    public init(id: String? = nil, version: String = "2.0", createdDate: Date, action: RemoteAction,
                sendNotification: Bool = true, status: CommandStatus = CommandStatus(state: .pending), otp: String = "") {
        self.id = id
        self.version = version
        self.createdDate = createdDate
        self.action = action
        self.sendNotification = sendNotification
        self.status = status
        self.otp = otp
    }

    /// `remote command <id> <action> <state>` (the OTP is left out).
    public var description: String {
        "remote command \(id ?? "(unsent)") \(action.loopCommand) \(status.state.rawValue)"
            + (status.message.isEmpty ? "" : ": \(status.message)")
    }
}
