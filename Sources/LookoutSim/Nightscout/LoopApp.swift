import Foundation
import LookoutWire

/// What the simulated Loop app did with one push (spec §5.1 "Loop side", §5.2).
///
/// After `POST /api/v2/notifications/loop` answers 200 (and `Options.loop.enact` is true), the
/// simulator plays the receiving Loop app: it classifies the push, ignores a re-delivered
/// `sent-at` id, rejects an expired push, requires and checks the OTP for bolus and carbs
/// (current or previous 30 s period, a used code is refused), then uploads what Loop would as
/// a v1 treatment (success) or a failure `Note` (`enteredBy` = action description, `notes` =
/// error + newline + notification JSON).
///
/// Simplifications: no pump, so no bolus/carb limits, pump increments or delivery time; the
/// dose is uploaded at once as a `Correction Bolus`; no carb start-time limits; Loop's upload
/// is immediate (same request) rather than at its next sync.
public struct LoopAppEvent: Sendable, Equatable {
    /// What happened.
    public enum Outcome: Sendable, Equatable {
        /// The command was enacted (`uploaded` is Loop's treatment, or nil when there was
        /// nothing to upload, e.g. cancel without an active override).
        case enacted
        /// The command failed with this error text (`uploaded` is the `Note`).
        case failed(String)
        /// The push's id (`sent-at` in epoch seconds) was already seen; nothing happened.
        case ignoredDuplicate
    }

    /// Index of the push in `receivedLoopNotifications()`.
    public var notificationIndex: Int
    /// Loop's action description (`Bolus Entry 1.5 U`, `Carb Entry 20 g`, `Override Exercise`,
    /// `Cancel Override`, `Loop Remote Action Error`).
    public var action: String
    /// The outcome.
    public var outcome: Outcome
    /// The phone's time when it handled the push (server clock + `pushDeliveryDelay`).
    public var handledAt: Date
    /// The treatment the app stored (with `_id`), if any.
    public var uploaded: JSONValue?
}

/// The simulated Loop app's state: seen push ids, accepted OTPs, outcomes.
struct LoopAppState: Sendable {
    var seenIDs: Set<Int64> = []
    var usedOTPs: [String] = []
    var events: [LoopAppEvent] = []
}

/// The Loop app side of remote commands (NightscoutService `RemoteCommandSourceV1`,
/// `RemoteCommandValidator`, `OTPManager`).
enum LoopApp {
    /// A classified push.
    enum Action {
        case bolus(Double)
        case carbs(Double, absorptionHours: Double, start: String?)
        case override(String, minutes: Double?)
        case cancel
        case unhandled

        var description: String {
            switch self {
            case .bolus(let u): return "Bolus Entry \(LoopApp.number(u)) U"
            case .carbs(let g, _, _): return "Carb Entry \(LoopApp.number(g)) g"
            case .override(let name, _): return "Override \(name)"
            case .cancel: return "Cancel Override"
            case .unhandled: return "Loop Remote Action Error"
            }
        }
        var needsOTP: Bool {
            switch self {
            case .bolus, .carbs: return true
            default: return false
            }
        }
    }

    static func number(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) }

    static func classify(_ p: JSONValue) -> Action {
        if let b = NightscoutLoop.number(p["bolus-entry"]) { return .bolus(b) }
        if let c = NightscoutLoop.number(p["carbs-entry"]) {
            return .carbs(c, absorptionHours: NightscoutLoop.number(p["absorption-time"]) ?? 3.0, start: p["start-time"]?.stringValue)
        }
        if let name = p["override-name"]?.stringValue { return .override(name, minutes: NightscoutLoop.number(p["override-duration-minutes"])) }
        if p["cancel-temporary-override"] != nil { return .cancel }
        return .unhandled
    }

    /// The OTP check of §5.2 at phone time `nowMs`; nil when accepted (and remembered).
    static func validateOTP(_ otp: String?, secret: String, nowMs: Int64, state: inout LoopAppState) -> String? {
        guard let otp, !otp.isEmpty else { return "Missing OTP" }
        guard let key = LoopOTP.base32Decode(secret), !key.isEmpty else { return "OTP secret is not configured" }
        let counter = UInt64(max(0, nowMs) / 30_000)
        if state.usedOTPs.contains(otp) { return "Password \(otp) was already used" }
        guard otp.count == 6 else { return "Password \(otp) is incorrect" }
        let window = (0..<2).compactMap { counter >= $0 ? counter - UInt64($0) : nil }
        if window.contains(where: { LoopOTP.code(key: key, counter: $0) == otp }) {
            state.usedOTPs.append(otp)
            if state.usedOTPs.count > 2 { state.usedOTPs.removeFirst(state.usedOTPs.count - 2) }
            return nil
        }
        // Codes from the last hour (120 periods) but outside the window are "expired".
        let older = (2..<120).compactMap { counter >= $0 ? counter - UInt64($0) : nil }
        if older.contains(where: { LoopOTP.code(key: key, counter: $0) == otp }) { return "Password \(otp) has expired" }
        return "Password \(otp) is incorrect"
    }

    /// The decision taken under the recorder's lock.
    enum Decision: Sendable {
        case duplicate(String)
        case fail(String, String)
        case enact(String)
    }

    /// Handles one push delivered to the phone: decides, uploads, records.
    static func receive(sim: NightscoutSimulator, payload: JSONValue, notificationIndex: Int, serverNowMs: Int64) async -> LoopAppEvent {
        let loop = sim.options.loop
        let nowMs = serverNowMs + Int64((loop.pushDeliveryDelay * 1000).rounded())
        let action = classify(payload)
        let description = action.description
        let decision = await sim.loopRecorder.withAppState { state -> Decision in
            if let sent = payload["sent-at"]?.stringValue, let ms = NSDates.parseISO(sent)?.ms {
                let id = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
                if state.seenIDs.contains(id) { return .duplicate(description) }
                state.seenIDs.insert(id)
            }
            if case .unhandled = action { return .fail(description, "Unhandled Notification") }
            if let exp = payload["expiration"]?.stringValue, let e = NSDates.parseISO(exp)?.ms, nowMs > e {
                return .fail(description, "Expired")
            }
            if action.needsOTP,
                let error = validateOTP(payload["otp"]?.stringValue, secret: loop.otpSecret, nowMs: nowMs, state: &state)
            {
                return .fail(description, error)
            }
            if case .override(let name, _) = action, let presets = loop.overridePresets, !presets.contains(name) {
                return .fail(description, "Unknown override preset: \(name)")
            }
            return .enact(description)
        }
        var event = LoopAppEvent(notificationIndex: notificationIndex, action: description, outcome: .ignoredDuplicate,
                                 handledAt: Date(timeIntervalSince1970: Double(nowMs) / 1000), uploaded: nil)
        switch decision {
        case .duplicate:
            break
        case .fail(let by, let error):
            let note: [String: JSONValue] = [
                "eventType": "Note", "created_at": .string(NSDates.iso(nowMs)), "enteredBy": .string(by),
                "notes": .string(error + "\n" + payload.jsonString),
            ]
            event.outcome = .failed(error)
            event.uploaded = await upload(sim: sim, note, nowMs: nowMs)
        case .enact:
            event.outcome = .enacted
            event.uploaded = await enact(action, sim: sim, payload: payload, nowMs: nowMs)
        }
        await sim.loopRecorder.withAppState { $0.events.append(event) }
        return event
    }

    /// Stores a treatment as a v1 upload would; returns it with `_id`.
    static func upload(sim: NightscoutSimulator, _ fields: [String: JSONValue], nowMs: Int64) async -> JSONValue {
        await sim.store.transact { data -> JSONValue in
            var f = fields
            var oid = NSObjectId.make()
            if let id = f.removeValue(forKey: "_id")?.stringValue {
                if NSObjectId.isValid(id) { oid = id } else { f["identifier"] = .string(id) }
            }
            _ = NightscoutV1.prepareTreatment(&f, now: nowMs)
            data.insert("treatments", NSDoc(oid: oid, fields: f))
            f["_id"] = .string(oid)
            return .object(f)
        }
    }

    /// Ends the running override at `nowMs` (Loop shortens the uploaded override's duration);
    /// returns the updated document, if one was running.
    static func endActiveOverride(sim: NightscoutSimulator, nowMs: Int64) async -> JSONValue? {
        await sim.store.transact { data -> JSONValue? in
            let docs = data.docs("treatments")
            var best: (Int, Int64)?
            for (i, d) in docs.enumerated() where d.isValid && d.fields["eventType"] == .string("Temporary Override") {
                guard let ca = d.fields["created_at"]?.stringValue, let start = NSDates.parseISO(ca)?.ms, start <= nowMs else { continue }
                let indefinite = d.fields["durationType"] == .string("indefinite")
                let minutes = d.fields["duration"]?.doubleValue
                let active = indefinite || minutes.map { Double(start) + $0 * 60_000 > Double(nowMs) } ?? true
                guard active else { continue }
                if best == nil || start > best!.1 { best = (i, start) }
            }
            guard let (i, start) = best else { return nil }
            var f = data.collections["treatments"]![i].fields
            f.removeValue(forKey: "durationType")
            f["duration"] = .number((Double(nowMs - start) / 60_000 * 1000).rounded() / 1000)
            data.collections["treatments"]![i].fields = f
            f["_id"] = .string(data.collections["treatments"]![i].oid)
            return .object(f)
        }
    }

    static func enact(_ action: Action, sim: NightscoutSimulator, payload: JSONValue, nowMs: Int64) async -> JSONValue? {
        let device = "loop://iPhone"
        let now = JSONValue.string(NSDates.iso(nowMs))
        let sync = JSONValue.string(UUID().uuidString)
        switch action {
        case .bolus(let units):
            return await upload(sim: sim, [
                "eventType": "Correction Bolus", "created_at": now, "timestamp": now, "enteredBy": .string(device),
                "insulin": .number(units), "programmed": .number(units), "unabsorbed": 0, "type": "normal",
                "automatic": false, "syncIdentifier": sync,
            ], nowMs: nowMs)
        case .carbs(let grams, let hours, let start):
            let at = start.flatMap { NSDates.parseISO($0) }.map { JSONValue.string(NSDates.iso($0.ms)) } ?? now
            return await upload(sim: sim, [
                "eventType": "Carb Correction", "created_at": at, "timestamp": at, "enteredBy": .string(device),
                "carbs": .number(grams), "absorptionTime": .number(hours * 60), "syncIdentifier": sync,
                "userEnteredAt": now,
            ], nowMs: nowMs)
        case .override(let name, let minutes):
            _ = await endActiveOverride(sim: sim, nowMs: nowMs)
            var f: [String: JSONValue] = [
                "_id": sync, "eventType": "Temporary Override", "created_at": now, "timestamp": now,
                "enteredBy": "Loop (via remote command)", "reason": .string(name), "reasonDisplay": .string(name),
                "remoteAddress": payload["remote-address"] ?? .null,
            ]
            if let minutes, minutes > 0 { f["duration"] = .number(minutes) } else { f["durationType"] = "indefinite" }
            return await upload(sim: sim, f, nowMs: nowMs)
        case .cancel:
            return await endActiveOverride(sim: sim, nowMs: nowMs)
        case .unhandled:
            return nil
        }
    }
}

extension NightscoutSimulator {
    /// What the simulated Loop app did with each delivered push, oldest first (see `LoopAppEvent`).
    public func loopAppEvents() async -> [LoopAppEvent] { await loopRecorder.withAppState { $0.events } }

    /// Delivers the push of notification `index` (in `receivedLoopNotifications()`) to the Loop
    /// app again, as an APNs re-delivery would; returns what the app did (a duplicate is
    /// ignored), or nil when that notification had no successful push.
    @discardableResult
    public func redeliverLoopPush(_ index: Int) async -> LoopAppEvent? {
        let all = await receivedLoopNotifications()
        guard all.indices.contains(index), all[index].status == 200, let push = all[index].push else { return nil }
        return await LoopApp.receive(sim: self, payload: push.payload, notificationIndex: index,
                                     serverNowMs: NSDates.ms(options.clock()))
    }

    /// The code the simulated Loop app accepts now for `options.loop.otpSecret` (what a
    /// caregiver app would show).
    public func loopOTPCode(at date: Date? = nil) -> String? {
        LoopOTP.code(base32Secret: options.loop.otpSecret, at: date ?? options.clock())
    }
}
