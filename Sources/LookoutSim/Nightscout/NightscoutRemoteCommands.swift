import Foundation
import LookoutWire

/// How the simulated receiving app (Loop with Remote 2.0) handles stored commands.
public enum RemoteAppMode: Sendable, Equatable {
    /// On each notified command (`sendNotification: true`) the app at once marks it
    /// `InProgress`, then `Success` or `Error`.
    case automatic
    /// Nothing happens until a test calls `stepRemoteApp()`.
    case manual
}

/// One state change the simulated receiving app made.
public struct RemoteAppStep: Sendable, Equatable {
    /// The command's `_id`.
    public var id: String
    /// The new state (`InProgress`, `Success`, `Error`).
    public var state: String
    /// The message written with it (`""` when none).
    public var message: String
}

/// The Remote 2.0 command store and the simulated receiving app's controls (spec §5.3; the
/// server side is unverified, so this follows the client contract).
actor RemoteCommandsState {
    var enabled: Bool
    var mode: RemoteAppMode = .automatic
    var docs: [[String: JSONValue]] = []
    var injectedFailures: [String] = []
    var steps: [RemoteAppStep] = []
    var closedLoop = true
    var autobolus = false
    private var nextID: UInt64 = 1

    init(enabled: Bool) { self.enabled = enabled }

    func makeID() -> String {
        defer { nextID += 1 }
        return String(format: "%08x", UInt32(truncatingIfNeeded: nextID)) + NSObjectId.make().suffix(16)
    }
    func insert(_ doc: [String: JSONValue]) { docs.append(doc) }
    func update(id: String, _ body: (inout [String: JSONValue]) -> Void) -> [String: JSONValue]? {
        guard let i = docs.firstIndex(where: { $0["_id"]?.stringValue == id }) else { return nil }
        body(&docs[i])
        return docs[i]
    }
    func remove(where pred: ([String: JSONValue]) -> Bool) -> Int {
        let before = docs.count
        docs.removeAll(where: pred)
        return before - docs.count
    }
    func set(enabled: Bool) { self.enabled = enabled }
    func set(mode: RemoteAppMode) { self.mode = mode }
    func inject(_ message: String) { injectedFailures.append(message) }
    func takeInjectedFailure() -> String? { injectedFailures.isEmpty ? nil : injectedFailures.removeFirst() }
    func record(_ s: RemoteAppStep) { steps.append(s) }
    func setToggle(_ key: String, _ on: Bool) { if key == "closedLoop" { closedLoop = on } else { autobolus = on } }
}

/// `/api/v2/remotecommands` (spec §5.3) and the simulated receiving app.
///
/// Routes (v1 auth; permissions `api:remotecommands:{create,read,update,delete}` — an
/// assumption, the server side is unverified; the admin secret has them all):
/// * `POST` stores the body (it must have `version`, `createdDate`, `status` and an `action`
///   object with one key), adds `_id` and `created_at` (= `createdDate` in UTC) and answers the
///   stored document; with `sendNotification: true` the app is notified (`RemoteAppMode`).
/// * `GET ?find[created_at][$gte]=ISO&find[status.state][$eq]=S&count=N` (default 50), newest first.
/// * `PUT /{_id}` with `{"status":{…}}` replaces the status; 404 for an unknown id.
/// * `DELETE ?find[created_at][$gte]=ISO` removes those commands (`{"n": count}`).
/// When disabled (`LoopSettings.remoteCommands` false, or `setRemoteCommandsEnabled(false)`)
/// every route answers 404 as cgm-remote-monitor 15 does.
enum NightscoutRemoteCommands {
    static func badRequest(_ m: String) -> SimResponse { .json(400, ["status": 400, "message": .string(m)]) }

    static func handle(_ ctx: NightscoutV1.Ctx, tail: [String]) async -> SimResponse {
        let state = ctx.sim.remoteCommandsState
        guard await state.enabled else { return NightscoutV1.notFound }
        switch (ctx.req.method, tail.count) {
        case ("POST", 0):
            guard ctx.can("api:remotecommands:create") else { return NightscoutV1.unauthorized }
            guard case .object(var doc)? = ctx.body else { return badRequest("expected a JSON object") }
            if let problem = problem(in: doc) { return badRequest(problem) }
            let created = NSDates.parseISO(doc["createdDate"]?.stringValue ?? "")!.ms
            doc["_id"] = .string(await state.makeID())
            doc["created_at"] = .string(NSDates.iso(created))
            await state.insert(doc)
            if doc["sendNotification"] == .bool(true), await state.mode == .automatic, let id = doc["_id"]?.stringValue {
                // The push reaches the phone; the app works on the command after the answer.
                let sim = ctx.sim
                Task {
                    _ = await RemoteApp.step(sim: sim, id: id)
                    _ = await RemoteApp.step(sim: sim, id: id)
                }
            }
            return .json(200, .object(doc))
        case ("GET", 0):
            guard ctx.can("api:remotecommands:read") else { return NightscoutV1.unauthorized }
            var since: Int64?
            if let s = ctx.req.queryValue("find[created_at][$gte]") {
                guard let ms = NSDates.parseISO(s)?.ms else { return badRequest("find[created_at][$gte]: not a date") }
                since = ms
            }
            let wanted = ctx.req.queryValue("find[status.state][$eq]")
            let count = ctx.req.queryValue("count").flatMap { Int($0) } ?? 50
            let docs = await state.docs.filter { d in
                (since.map { s in createdMs(d).map { $0 >= s } ?? false } ?? true)
                    && (wanted.map { d["status"]?["state"]?.stringValue == $0 } ?? true)
            }
            let sorted = docs.sorted { (createdMs($0) ?? 0) > (createdMs($1) ?? 0) }
            return .json(200, .array(sorted.prefix(max(0, count)).map { .object($0) }))
        case ("PUT", 1):
            guard ctx.can("api:remotecommands:update") else { return NightscoutV1.unauthorized }
            guard case .object(let s)? = ctx.body?["status"], let st = s["state"]?.stringValue,
                  ["Pending", "InProgress", "Success", "Error"].contains(st) else {
                return badRequest("expected {\"status\":{\"state\":\"Pending|InProgress|Success|Error\",\"message\":…}}")
            }
            let status = JSONValue.object(["state": .string(st), "message": s["message"] ?? .string("")])
            guard let doc = await state.update(id: tail[0], { $0["status"] = status }) else { return NightscoutV1.notFound }
            return .json(200, .object(doc))
        case ("DELETE", 0):
            guard ctx.can("api:remotecommands:delete") else { return NightscoutV1.unauthorized }
            guard let s = ctx.req.queryValue("find[created_at][$gte]"), let since = NSDates.parseISO(s)?.ms else {
                return badRequest("find[created_at][$gte] is required")
            }
            let n = await state.remove { createdMs($0).map { $0 >= since } ?? false }
            return .json(200, ["n": .int(Int64(n))])
        default:
            return NightscoutV1.notFound
        }
    }

    static func createdMs(_ d: [String: JSONValue]) -> Int64? {
        d["created_at"]?.stringValue.flatMap { NSDates.parseISO($0)?.ms }
    }

    /// What is wrong with a posted command, or nil.
    static func problem(in d: [String: JSONValue]) -> String? {
        guard d["version"]?.stringValue != nil else { return "version is required" }
        guard let c = d["createdDate"]?.stringValue, NSDates.parseISO(c) != nil else { return "createdDate must be a date" }
        guard let st = d["status"]?["state"]?.stringValue, ["Pending", "InProgress", "Success", "Error"].contains(st) else {
            return "status.state must be Pending, InProgress, Success or Error"
        }
        guard case .object(let a)? = d["action"], a.count == 1, let key = a.keys.first,
              ["bolus", "carbs", "override", "cancelOverride", "closedLoop", "autobolus"].contains(key),
              a[key]?.objectValue != nil else {
            return "action must be an object with one of bolus, carbs, override, cancelOverride, closedLoop, autobolus"
        }
        return nil
    }
}

/// The receiving app of Remote 2.0 (gestrich's NightscoutService branch, spec §5.3): it takes a
/// `Pending` command to `InProgress`, then validates it (OTP against `createdDate`, the
/// command's age, the pump's maximum bolus, injected failures) and enacts it (uploading the
/// treatment as `LoopApp` does for 1.0) with `Success`, or ends it with `Error` and a message.
///
/// Validation, in order (the OTP is needed for bolus and carbs, as in 1.0):
/// * an injected failure (`injectRemoteCommandFailure`) → its message;
/// * app time − `createdDate` > `LoopSettings.remoteCommandMaxAge` → `Password <otp> has expired`
///   (or `Expired` without an OTP);
/// * OTP missing, reused or not valid for `createdDate` → `Missing OTP`,
///   `Password … was already used`, `Password … is incorrect`;
/// * bolus above `LoopSettings.pumpMaxBolus` → `Bolus 12 U exceeds the pump's maximum bolus of 10 U`;
/// * override preset unknown (`overridePresets`) → `Unknown override preset: <name>`.
enum RemoteApp {
    /// Advances command `id` one step; nil when it is final or unknown.
    static func step(sim: NightscoutSimulator, id: String) async -> RemoteAppStep? {
        let state = sim.remoteCommandsState
        guard let doc = await state.docs.first(where: { $0["_id"]?.stringValue == id }) else { return nil }
        let current = doc["status"]?["state"]?.stringValue
        let next: RemoteAppStep
        switch current {
        case "Pending":
            next = RemoteAppStep(id: id, state: "InProgress", message: "")
        case "InProgress":
            let nowMs = NSDates.ms(sim.options.clock())
            if let error = await validate(doc, sim: sim, nowMs: nowMs) {
                next = RemoteAppStep(id: id, state: "Error", message: error)
            } else {
                await enact(doc, sim: sim, nowMs: nowMs)
                next = RemoteAppStep(id: id, state: "Success", message: "")
            }
        default:
            return nil
        }
        _ = await state.update(id: id) { $0["status"] = .object(["state": .string(next.state), "message": .string(next.message)]) }
        await state.record(next)
        return next
    }

    static func validate(_ doc: [String: JSONValue], sim: NightscoutSimulator, nowMs: Int64) async -> String? {
        let loop = sim.options.loop
        if let injected = await sim.remoteCommandsState.takeInjectedFailure() { return injected }
        guard case .object(let a)? = doc["action"], let (key, value) = a.first else { return "Unhandled command" }
        let createdMs = NSDates.parseISO(doc["createdDate"]?.stringValue ?? "")?.ms ?? 0
        let otp = doc["otp"]?.stringValue ?? ""
        let needsOTP = key == "bolus" || key == "carbs"
        if Double(nowMs - createdMs) > loop.remoteCommandMaxAge * 1000 {
            return otp.isEmpty ? "Expired" : "Password \(otp) has expired"
        }
        if needsOTP {
            let error = await sim.loopRecorder.withAppState { s in
                LoopApp.validateOTP(otp, secret: loop.otpSecret, nowMs: createdMs, state: &s)
            }
            if let error { return error }
        }
        if key == "bolus", let units = value["amountInUnits"]?.doubleValue, units > loop.pumpMaxBolus {
            return "Bolus \(LoopApp.number(units)) U exceeds the pump's maximum bolus of \(LoopApp.number(loop.pumpMaxBolus)) U"
        }
        if key == "override", let name = value["name"]?.stringValue, let presets = loop.overridePresets, !presets.contains(name) {
            return "Unknown override preset: \(name)"
        }
        return nil
    }

    /// Does what Loop does for a valid command: the 1.0 app's uploads, or flipping a toggle.
    static func enact(_ doc: [String: JSONValue], sim: NightscoutSimulator, nowMs: Int64) async {
        guard case .object(let a)? = doc["action"], let (key, value) = a.first else { return }
        let action: LoopApp.Action
        switch key {
        case "bolus": action = .bolus(value["amountInUnits"]?.doubleValue ?? 0)
        case "carbs":
            action = .carbs(value["amountInGrams"]?.doubleValue ?? 0,
                            absorptionHours: (value["absorptionTime"]?.doubleValue).map { $0 / 3600 } ?? 3,
                            start: value["startDate"]?.stringValue)
        case "override":
            action = .override(value["name"]?.stringValue ?? "", minutes: (value["durationTime"]?.doubleValue).map { $0 / 60 })
        case "cancelOverride": action = .cancel
        default:
            await sim.remoteCommandsState.setToggle(key, value["active"]?.boolValue ?? false)
            return
        }
        let payload: JSONValue = ["remote-address": value["remoteAddress"] ?? .null]
        _ = await LoopApp.enact(action, sim: sim, payload: payload, nowMs: nowMs)
    }
}

extension NightscoutSimulator {
    /// Turns `/api/v2/remotecommands` on or off at run time (off: every route answers 404, like
    /// a site without Remote 2.0).
    public func setRemoteCommandsEnabled(_ enabled: Bool) async { await remoteCommandsState.set(enabled: enabled) }

    /// Sets how the simulated receiving app works (`RemoteAppMode`, default `.automatic`).
    public func setRemoteAppMode(_ mode: RemoteAppMode) async { await remoteCommandsState.set(mode: mode) }

    /// Makes the next command the app validates end in `Error` with `message`.
    public func injectRemoteCommandFailure(_ message: String) async { await remoteCommandsState.inject(message) }

    /// Advances every non-final command one step (`Pending` → `InProgress` → `Success`/`Error`),
    /// oldest first; returns the changes.
    @discardableResult
    public func stepRemoteApp() async -> [RemoteAppStep] {
        let ids = await remoteCommandsState.docs.compactMap { $0["_id"]?.stringValue }
        var out: [RemoteAppStep] = []
        for id in ids { if let s = await RemoteApp.step(sim: self, id: id) { out.append(s) } }
        return out
    }

    /// Every state change the simulated receiving app made, oldest first.
    public func remoteAppSteps() async -> [RemoteAppStep] { await remoteCommandsState.steps }

    /// The stored Remote 2.0 commands, oldest first, as stored (with `_id` and `created_at`).
    public func storedRemoteCommands() async -> [JSONValue] { await remoteCommandsState.docs.map { .object($0) } }

    /// The app's closed-loop and autobolus switches (changed by enacted toggles).
    public func remoteAppToggles() async -> (closedLoop: Bool, autobolus: Bool) {
        await (remoteCommandsState.closedLoop, remoteCommandsState.autobolus)
    }
}
