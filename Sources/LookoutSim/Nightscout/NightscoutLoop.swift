import Foundation
import LookoutWire

/// One call to `POST /api/v2/notifications/loop` as the simulator saw it (§5.1, §6.5).
public struct LoopNotification: Sendable {
    /// The request body as received (NightscoutKit sends all values as strings).
    public var body: JSONValue
    /// HTTP status the simulator answered (200 or 500).
    public var status: Int
    /// Response body (`OK` or the §5.1 error string).
    public var response: String
    /// The would-be APNs push (nil when a precondition failed): topic, device token and payload.
    public var push: Push?

    /// A recorded APNs push.
    public struct Push: Sendable {
        /// `loopSettings.bundleIdentifier`.
        public var topic: String
        /// `loopSettings.deviceToken`.
        public var deviceToken: String
        /// Payload keys of §5.1 (`remote-address`, `sent-at`, `expiration`, `bolus-entry`, …).
        public var payload: JSONValue
    }
}

/// Collects Loop notifications and holds the simulated Loop app's state (`LoopApp.swift`).
actor LoopRecorder {
    var all: [LoopNotification] = []
    var app = LoopAppState()
    /// Appends `n` and returns its index.
    func add(_ n: LoopNotification) -> Int {
        all.append(n)
        return all.count - 1
    }
    /// Runs `body` atomically on the Loop app state.
    func withAppState<T: Sendable>(_ body: (inout LoopAppState) -> T) -> T { body(&app) }
}

/// `POST /api/v2/notifications/loop` (§5.1).
enum NightscoutLoop {
    static func number(_ v: JSONValue?) -> Double? {
        switch v {
        case .string(let s)?: return Double(s.trimmingCharacters(in: .whitespaces))
        case let x?: return x.doubleValue
        case nil: return nil
        }
    }

    static func handle(_ ctx: NightscoutV1.Ctx) async -> SimResponse {
        var body = ctx.body ?? .object([:])
        if ctx.body == nil, !ctx.req.body.isEmpty {
            // urlencoded form
            let items = SimRequest.parseQuery(String(decoding: ctx.req.body, as: UTF8.self))
            body = .object(Dictionary(items.map { ($0.0, JSONValue.string($0.1)) }, uniquingKeysWith: { _, b in b }))
        }
        let (status, text, push) = await evaluate(ctx, body: body)
        let index = await ctx.sim.loopRecorder.add(LoopNotification(body: body, status: status, response: text, push: push))
        if status == 200, let push, ctx.sim.options.loop.enact {
            // The phone receives the push (§5.1 "Loop side"), see `LoopApp`.
            _ = await LoopApp.receive(sim: ctx.sim, payload: push.payload, notificationIndex: index, serverNowMs: ctx.now)
        }
        if status == 200 { return .text(200, "OK") }
        return .text(status, text, contentType: "text/html; charset=utf-8")
    }

    static func evaluate(_ ctx: NightscoutV1.Ctx, body: JSONValue) async -> (Int, String, LoopNotification.Push?) {
        let loop = ctx.sim.options.loop
        func fail(_ s: String) -> (Int, String, LoopNotification.Push?) { (500, s, nil) }
        guard loop.apnsKey != nil else { return fail("Loop notification failed: LOOP_APNS_KEY not set.") }
        guard loop.apnsKeyID != nil else { return fail("Loop notification failed: LOOP_APNS_KEY_ID not set.") }
        guard let team = loop.developerTeamID, team.count == 10 else {
            return fail("Loop notification failed: LOOP_DEVELOPER_TEAM_ID not set.")
        }
        let profiles = await ctx.sim.store.transact { $0.docs("profile") }
        let newest = NightscoutQuery.sortDescending(profiles, col: "profile").first
        guard let ls = newest?.fields["loopSettings"]?.objectValue else {
            return fail("Loop notification failed: Could not find loopSettings in profile.")
        }
        guard let token = ls["deviceToken"]?.stringValue else {
            return fail("Loop notification failed: Could not find deviceToken in loopSettings.")
        }
        guard let topic = ls["bundleIdentifier"]?.stringValue else {
            return fail("Loop notification failed: Could not find bundleIdentifier in loopSettings.")
        }
        var p: [String: JSONValue] = [
            "remote-address": .string(ctx.req.client),
            "notes": body["notes"] ?? .null, "entered-by": body["enteredBy"] ?? .null,
            "sent-at": .string(NSDates.iso(ctx.now)), "expiration": .string(NSDates.iso(ctx.now + 5 * 60_000)),
        ]
        let otp = body["otp"]?.stringValue
        switch body["eventType"]?.stringValue {
        case "Temporary Override Cancel":
            p["cancel-temporary-override"] = "true"
        case "Temporary Override":
            p["override-name"] = body["reason"] ?? .null
            if let d = number(body["duration"]), d > 0 { p["override-duration-minutes"] = .number(d.rounded(.towardZero)) }
        case "Remote Carbs Entry":
            guard let c = number(body["remoteCarbs"]), c > 0 else {
                return fail("Loop remote carbs failed. Incorrect carbs entry: ")
            }
            p["carbs-entry"] = .number(c)
            p["absorption-time"] = .number(number(body["remoteAbsorption"]).flatMap { $0 > 0 ? $0 : nil } ?? 3.0)
            if let s = body["created_at"] { p["start-time"] = s }
            if let otp, !otp.isEmpty { p["otp"] = .string(otp) }
        case "Remote Bolus Entry":
            guard let b = number(body["remoteBolus"]), b > 0 else {
                return fail("Loop remote bolus failed. Incorrect bolus entry: ")
            }
            p["bolus-entry"] = .number(b)
            if let otp, !otp.isEmpty { p["otp"] = .string(otp) }
        default:
            return fail("Loop notification failed: Unhandled event type:")
        }
        let push = LoopNotification.Push(topic: topic, deviceToken: token, payload: .object(p))
        if let reason = loop.apnsFailure { return (500, "APNs delivery failed: \(reason)", push) }
        return (200, "OK", push)
    }
}
