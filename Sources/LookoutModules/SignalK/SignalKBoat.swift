import Foundation
import LookoutConfig
import Lua
import SignalKKit
import LookoutWire

/// The object behind a script's boat (`local boat <close> = signalk.connect "boat"`): a started
/// `SignalKStream` with its store, a REST client for reads the store cannot answer and for PUT,
/// and the feed that serves `deltas` loops.
///
/// The engine anchors the boat until it is closed (or the script ends, which closes it), so a
/// stream never stops because a script dropped its variable.
final class SignalKLuaBoat: LuaObject {
    static let type = LuaObjectType(name: "lookout.signalk.boat", displayName: "signalk boat")

    let stream: SignalKStream
    let rest: SignalKREST
    let feed: SignalKFeed
    /// How messages and recorded side effects name the boat: the profile name, or the redacted URL.
    public let label: String
    private let pump: Task<Void, Never>
    private(set) var isClosed = false
    /// The profile's token and access requests (`nil` for `connect{url=…}`).
    let access: SignalKProfileAccess?

    init(stream: SignalKStream, rest: SignalKREST, feed: SignalKFeed, pump: Task<Void, Never>, label: String,
         access: SignalKProfileAccess? = nil) {
        self.stream = stream
        self.rest = rest
        self.feed = feed
        self.pump = pump
        self.label = label
        self.access = access
    }

    deinit { shutdown() }

    var luaDescription: String {
        "signalk boat \(label) (\(Redaction.display(stream.configuration.url)))" + (isClosed ? " (closed)" : "")
    }

    func luaClose(engine: LuaEngine) {
        shutdown()
        engine.unanchor(self)
    }

    /// Stops the stream; every `deltas` loop ends after its buffered values. Idempotent.
    func shutdown() {
        guard !isClosed else { return }
        isClosed = true
        feed.finishAll()
        let stream = self.stream, pump = self.pump
        Task {
            await stream.close()
            pump.cancel()
        }
    }

    /// The open boat behind `self`; a closed one raises.
    static func boat(_ call: LuaCall) throws(LuaRaise) -> SignalKLuaBoat {
        let boat = try call.object(as: SignalKLuaBoat.self, type: type)
        guard !boat.isClosed else { throw LuaRaise("attempt to use a closed \(type.displayName)") }
        return boat
    }

    /// Runs Kit work for a script: the call waits, and Kit errors become `nil, err` with
    /// `err.service == "signalk"`.
    static func wait<T: Sendable>(_ call: LuaCall, _ what: String, _ operation: @escaping @Sendable () async throws -> T,
                                  deliver: @escaping (LuaStack, T) -> Int32) throws(LuaRaise) -> LuaReturn {
        try call.request(what, {
            do { return try await operation() } catch { throw LuaErrorInfo.signalk(error) }
        }, deliver: deliver)
    }

    /// The methods implemented in Swift (`deltas` and `on` are Lua over a primitive; see
    /// `SignalKLuaBoat+Stream.swift`).
    static var methods: [String: LuaBinding] { [
        "get": { call in
            let boat = try boat(call)
            let path = try call.string(1)
            let stream = boat.stream, rest = boat.rest
            let cached = call.engine.clock.virtual == nil  // virtual time (lookout test): what the server has now
            let access = boat.access
            return try wait(call, "signalk get \(path)", {
                if cached, let v = await stream.store.value(path) { return v }
                return SignalKLuaValues.leafValue(try await authorized(access, rest) { try await rest.get(path) })
            }) { stack, value in
                SignalKLuaValues.push(value, on: stack)
                return 1
            }
        },
        "meta": { call in
            let boat = try boat(call)
            let path = try call.string(1)
            guard !path.isEmpty, !path.hasPrefix("vessels.") else {
                throw call.argumentError(1, "expected a path of the own vessel such as \"navigation.speedOverGround\"")
            }
            let rest = boat.rest, access = boat.access
            return try wait(call, "signalk meta \(path)", {
                try await authorized(access, rest) { try await rest.get(path: path + ".meta", context: "vessels.self") }
            }) { stack, value in
                SignalKLuaValues.push(value, on: stack)
                return 1
            }
        },
        "put": { call in
            let boat = try boat(call)
            let path = try call.string(1)
            let value: JSONValue
            do { value = try SignalKLuaValues.skValue(try call.value(2)) } catch let e as LuaConversionError {
                throw call.argumentError(2, e.description)
            }
            if let recorded = SideEffectRecorder.put(call, boat: boat.label, path: path, value: value) { return recorded }
            let rest = boat.rest, access = boat.access
            return try wait(call, "signalk put \(path)", { try await authorized(access, rest) { try await rest.put(path, value: value) } }) { stack, result in
                var fields: [String: LuaValue] = ["state": .text(result.state), "statusCode": .int(Int64(result.statusCode))]
                if let m = result.message { fields["message"] = .text(m) }
                if let r = result.requestId { fields["requestId"] = .text(r) }
                if let h = result.href { fields["href"] = .text(h) }
                stack.push(LuaValue.object(fields))
                return 1
            }
        },
        "subscribe": { call in
            let boat = try boat(call)
            guard call.stack.kind(at: call.index(1)) == .table else {
                throw call.argumentError(1, "table expected, got \(call.stack.typeName(at: call.index(1)))")
            }
            let (rows, context) = try SignalKRows.parse(try call.value(1, name: "rows"), call: call, n: 1, name: "rows")
            let stream = boat.stream
            return try wait(call, "signalk subscribe", {
                await stream.subscribe(rows, context: context)
                return true
            }) { stack, ok in
                stack.push(ok)
                return 1
            }
        },
        "close": { call in
            try call.closeSelf(type: type)
            return .nothing
        },
        "self": { call in
            let boat = try boat(call)
            guard let context = boat.feed.hello?.selfContext else { return .values(0) }
            return call.returning(.text(context))
        },
        "hello": { call in
            let boat = try boat(call)
            guard let h = boat.feed.hello else { return .values(0) }
            var fields: [String: LuaValue] = ["roles": .array(h.roles.map { .text($0) })]
            if let v = h.name { fields["name"] = .text(v) }
            if let v = h.version { fields["version"] = .text(v) }
            if let v = h.selfContext { fields["self"] = .text(v) }
            if let v = h.serverStartId { fields["serverStartId"] = .text(v) }
            if let v = h.timestamp { fields["timestamp"] = .text(SignalKTimestamp.format(v)) }
            return call.returning(.object(fields))
        },
        "state": { call in
            // A closed boat answers "closed" (as its stub lists) instead of raising: its box is
            // emptied by `close`, so the object lookup says it is closed.
            let boat: SignalKLuaBoat
            do throws(LuaRaise) { boat = try call.object(as: SignalKLuaBoat.self, type: type) } catch {
                guard error.message.hasPrefix("attempt to use a closed") else { throw error }
                return call.returning(.text("closed"))
            }
            let text: String
            switch boat.isClosed ? .closed : boat.feed.state {
            case .idle: text = "idle"
            case .connecting: text = "connecting"
            case .connected: text = "connected"
            case .waitingToReconnect: text = "reconnecting"
            case .closed: text = "closed"
            }
            guard let error = boat.feed.lastError else { return call.returning(.text(text)) }
            call.stack.push(.text(text))
            call.engine.push(error: LuaErrorInfo(code: "protocol", message: error.description, retryable: true, service: "signalk"),
                             on: call.stack)
            return .values(2)
        },
    ] }
}
