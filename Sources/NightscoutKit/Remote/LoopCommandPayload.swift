import Foundation
import LookoutWire

extension LoopCommand {
    /// The `eventType` NightscoutKit sends for the command (spec §5.1). The 2.0-only toggles
    /// have none in §5.1: they get `Remote Closed Loop` / `Remote Autobolus`, which `validate()`
    /// keeps from ever being sent.
    public var notificationEventType: EventType {
        switch self {
        case .closedLoop: return EventType(rawValue: "Remote Closed Loop")
        case .autobolus: return EventType(rawValue: "Remote Autobolus")
        case .bolus: return EventType(rawValue: "Remote Bolus Entry")
        case .carbs: return EventType(rawValue: "Remote Carbs Entry")
        case .override: return .temporaryOverride
        case .cancelOverride: return .temporaryOverrideCancel
        }
    }

    /// Checks the amounts the server and Loop would refuse: bolus and carbs must be finite and
    /// > 0, absorption finite and > 0, an override needs a name and a finite duration ≥ 0.
    /// Closed-loop and autobolus toggles cannot go through Remote 1.0.
    /// - Throws: `LoopRemoteError.invalidCommand`, `LoopRemoteError.notSupportedByServer`.
    public func validate() throws {
        switch self {
        case .closedLoop: throw LoopRemoteError.notSupportedByServer(.closedLoop)
        case .autobolus: throw LoopRemoteError.notSupportedByServer(.autobolus)
        case .bolus(let units):
            guard units.isFinite, units > 0 else { throw LoopRemoteError.invalidCommand("bolus must be more than 0 U") }
        case .carbs(let grams, let hours, _):
            guard grams.isFinite, grams > 0 else { throw LoopRemoteError.invalidCommand("carbs must be more than 0 g") }
            if let hours, !(hours.isFinite && hours > 0) {
                throw LoopRemoteError.invalidCommand("absorption time must be more than 0 h")
            }
        case .override(let name, let minutes):
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw LoopRemoteError.invalidCommand("override needs a preset name")
            }
            if let minutes, !(minutes.isFinite && minutes >= 0) {
                throw LoopRemoteError.invalidCommand("override duration must be 0 (indefinite) or more minutes")
            }
        case .cancelOverride: break
        }
    }

    /// The body fields of `POST /api/v2/notifications/loop` in NightscoutKit's order, all values
    /// strings (spec §5.1):
    /// - bolus: `eventType`, `remoteBolus`, `otp`;
    /// - carbs: `eventType`, `remoteCarbs`, `remoteAbsorption` (default `3.0`), `otp`,
    ///   `created_at` (`startDate` or `now`, ISO with milliseconds);
    /// - override: `eventType`, `reason`, `reasonDisplay` (default the name), `duration` (only
    ///   when > 0; none = until cancelled);
    /// - cancel: `eventType`, `duration` = `"0"`;
    /// then `notes` and `enteredBy` when given. Numbers use Swift's `Double` text (`1.5`, `20.0`).
    /// - Parameters:
    ///   - otp: the one-time code (sent for bolus and carbs only; omitted when nil or empty).
    ///   - notes: free text shown in Loop's notification.
    ///   - enteredBy: who sent the command.
    ///   - reasonDisplay: the override's display text (e.g. `🏃 Exercise`).
    ///   - now: the time used for a carbs entry without `startDate`.
    public func notificationFields(otp: String? = nil, notes: String? = nil, enteredBy: String? = nil,
                                   reasonDisplay: String? = nil, now: Date = Date()) -> [(String, String)] {
        func text(_ d: Double) -> String { String(describing: d) }
        var fields: [(String, String)] = [("eventType", notificationEventType.rawValue)]
        let code = otp.flatMap { $0.isEmpty ? nil : $0 }
        switch self {
        case .bolus(let units):
            fields.append(("remoteBolus", text(units)))
            if let code { fields.append(("otp", code)) }
        case .carbs(let grams, let hours, let start):
            fields.append(("remoteCarbs", text(grams)))
            fields.append(("remoteAbsorption", text(hours ?? 3.0)))
            if let code { fields.append(("otp", code)) }
            fields.append(("created_at", NightscoutDate(start ?? now).isoString))
        case .override(let name, let minutes):
            fields.append(("reason", name))
            fields.append(("reasonDisplay", reasonDisplay ?? name))
            if let minutes, minutes > 0 { fields.append(("duration", text(minutes))) }
        case .cancelOverride:
            fields.append(("duration", "0"))
        case .closedLoop(let on), .autobolus(let on):
            fields.append(("active", on ? "true" : "false"))
        }
        if let notes { fields.append(("notes", notes)) }
        if let enteredBy { fields.append(("enteredBy", enteredBy)) }
        return fields
    }

    /// The exact JSON body (`notificationFields` as one object, keys in that order, no
    /// whitespace, `/` and non-ASCII characters unescaped), e.g.
    /// `{"eventType":"Remote Bolus Entry","remoteBolus":"1.5","otp":"287082"}`.
    public func notificationBody(otp: String? = nil, notes: String? = nil, enteredBy: String? = nil,
                                 reasonDisplay: String? = nil, now: Date = Date()) -> Data {
        let fields = notificationFields(otp: otp, notes: notes, enteredBy: enteredBy, reasonDisplay: reasonDisplay, now: now)
        let members = fields.map { LoopCommand.jsonString($0.0) + ":" + LoopCommand.jsonString($0.1) }
        return Data(("{" + members.joined(separator: ",") + "}").utf8)
    }

    /// A JSON string literal, escaped as `JSON.stringify` escapes it (LookoutWire's writer).
    static func jsonString(_ s: String) -> String { JSONWriter.quoted(s) }

    /// The action description Loop uses as `enteredBy` of the `Note` it uploads when the command
    /// fails (spec §5.1): `Bolus Entry 1.5 U`, `Carb Entry 20 g`, `Override Exercise`,
    /// `Cancel Override`.
    public var loopActionDescription: String {
        func number(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }
        switch self {
        case .bolus(let units): return "Bolus Entry \(number(units)) U"
        case .carbs(let grams, _, _): return "Carb Entry \(number(grams)) g"
        case .override(let name, _): return "Override \(name)"
        case .cancelOverride: return "Cancel Override"
        case .closedLoop(let on): return "Closed Loop \(on ? "On" : "Off")"
        case .autobolus(let on): return "Autobolus \(on ? "On" : "Off")"
        }
    }
}
