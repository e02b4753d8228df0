import Foundation
import Lua
import SignalKKit
import LookoutWire

extension LuaEngine {
    /// Whether this state's modules send or record actions that reach outside. Modules made by
    /// `HostModules.all(…, sideEffects:)` set it when they load.
    public var sideEffects: SideEffects {
        get { hostContext[SideEffectRecorder.contextKey] as? SideEffects ?? .live }
        set { hostContext[SideEffectRecorder.contextKey] = newValue }
    }

    /// Records an action at the script's clock time when side effects are recorded; returns
    /// whether it did (the caller then sends nothing).
    public func recordSideEffect(kind: String, target: String, summary: String, details: [String: String] = [:]) -> Bool {
        guard let log = sideEffects.log else { return false }
        log.append(SideEffect(time: clock.now(), kind: kind, target: target, summary: summary, details: details))
        return true
    }
}

/// The recording side of the modules that reach outside: with `SideEffects.record`, each of
/// these returns what the script gets instead of the real call's answer (and the caller sends
/// nothing); with `.live` each returns `nil` and the caller goes on as usual.
public enum SideEffectRecorder {
    static let contextKey = "lookout.sideEffects"
    /// Longest JSON body kept in a recorded entry's details.
    static let bodyLimit = 400

    static func text(_ body: Data?) -> String {
        guard let body else { return "" }
        // Sorted keys: the same document reads the same in every run (timelines are compared).
        let sorted = (try? JSONSerialization.jsonObject(with: body))
            .flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .withoutEscapingSlashes]) }
        let text = String(decoding: sorted ?? body, as: UTF8.self)
        return text.count > bodyLimit ? String(text.prefix(bodyLimit)) + "…" : text
    }

    /// `create`, `upload_bg`, `upload_treatment`: answers like an outbox item, state `recorded`.
    static func upload(_ call: LuaCall, site: String, collection: String, _ document: NightscoutSite.QueuedDocument) -> LuaReturn? {
        let json = text(document.body)
        var summary = "upload \(collection)"
        if let object = try? JSONSerialization.jsonObject(with: document.body) as? [String: Any] {
            let keys = ["sgv", "eventType", "insulin", "carbs", "notes", "reason"]
            let parts = keys.compactMap { key in object[key].map { "\(key)=\($0)" } }
            if !parts.isEmpty { summary += " " + parts.joined(separator: " ") }
        }
        guard call.engine.recordSideEffect(kind: "nightscout.upload", target: site, summary: summary,
                                           details: ["collection": collection, "identifier": document.identifier, "body": json])
        else { return nil }
        return call.returning(.object([
            "id": .text(document.identifier), "state": .text("recorded"), "deduplicated": .bool(false), "attempts": .int(0),
        ]))
    }

    /// `update`, `patch`, `delete` (sent directly when live).
    static func write(_ call: LuaCall, _ action: String, _ collection: String, _ identifier: String, _ body: Data?) -> LuaReturn? {
        let site = (try? NightscoutSite.site(call))?.label ?? "?"
        var details = ["collection": collection, "identifier": identifier, "action": action]
        if body != nil { details["body"] = text(body) }
        guard call.engine.recordSideEffect(kind: "nightscout.\(action)", target: site,
                                           summary: "\(action) \(collection) \(identifier)", details: details)
        else { return nil }
        if action == "update" { return call.returning(.object(["created": .bool(false), "identifier": .text(identifier)])) }
        return call.returning(.bool(true))
    }

    /// A Loop remote command: recorded before any authorization or OTP (a test config has none).
    static func remote(_ call: LuaCall, site: String, command: String, invalid shown: String?) -> LuaReturn? {
        guard call.engine.sideEffects.log != nil else { return nil }
        if let shown {
            return call.failure(LuaErrorInfo(code: "refused", message: "amount must be a number, got \(shown)", service: "nightscout",
                                             details: ["reason": .text("invalid_amount")]))
        }
        _ = call.engine.recordSideEffect(kind: "nightscout.remote", target: site, summary: command, details: ["command": command])
        return call.returning(.object(["state": .text("recorded"), "command": .text(command)]))
    }

    /// `boat:put(path, value)`.
    static func put(_ call: LuaCall, boat: String, path: String, value: JSONValue) -> LuaReturn? {
        guard call.engine.recordSideEffect(kind: "signalk.put", target: boat, summary: "put \(path) = \(value.jsonString)",
                                           details: ["path": path, "value": value.jsonString])
        else { return nil }
        return call.returning(.object(["state": .text("COMPLETED"), "statusCode": .int(200), "message": .text("recorded")]))
    }

    /// `boat:send_delta{…}`.
    static func delta(_ call: LuaCall, boat: String, _ delta: SignalKDelta) -> LuaReturn? {
        let values = delta.updates.flatMap(\.values).map { "\($0.path)=\($0.value.jsonString)" }
        guard call.engine.recordSideEffect(kind: "signalk.delta", target: boat, summary: "delta " + values.joined(separator: " "),
                                           details: ["values": values.joined(separator: " ")])
        else { return nil }
        return call.returning(.bool(true))
    }
}

/// A module that marks the state it loads into with `sideEffects` before loading (so the
/// Nightscout and Signal K bindings find it on `call.engine`); everything else is the module's.
public struct SideEffectsScope: LuaModule {
    let module: any LuaModule
    let sideEffects: SideEffects

    public var name: String { module.name }
    public var stub: String { module.stub }
    public var isGlobal: Bool { module.isGlobal }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.sideEffects = sideEffects
        try module.push(into: engine, stack: stack)
    }

    /// Makes a value from its parts.
    public init(module: any LuaModule, sideEffects: SideEffects) {
        self.module = module
        self.sideEffects = sideEffects
    }
}
