import Foundation
import LookoutConfig
import LookoutStore
import Lua

/// `alert`: conditions over time series, freshness, escalation, acknowledgements (see
/// `Stubs/alert.lua`). The library is Lua (`alert_library.lua`), loaded with a small table of
/// host functions for the clock, the state database and the configured channel names; it sends
/// through the `notify` module.
struct AlertModule: LuaModule {
    let name = "alert"
    var stub: String { String(decoding: PackageResources.alert_lua, as: UTF8.self) }

    let config: HostConfig
    let openStore: @Sendable () throws -> any StateBackend

    /// The module over the state database at `paths`.
    init(config: HostConfig, paths: LookoutPaths) {
        self.init(config: config) { try StateBackends.shared(paths: paths) }
    }

    /// The module over an open store (tests).
    init(config: HostConfig, openStore: @escaping @Sendable () throws -> any StateBackend) {
        self.config = config
        self.openStore = openStore
    }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        try stack.load(PackageResources.alert_library_lua, name: "=[lookout] alert", what: "bundled module alert")
        engine.pushLibrary(hostFunctions(engine), prefix: "alert.host.", on: stack)
        stack.push(engine.options.name)
        stack.setField("script", in: -2)
        try stack.protectedCall(arguments: 1, results: 1, what: "loading alert")
    }

    private func hostFunctions(_ engine: LuaEngine) -> [String: LuaBinding] {
        let openStore = self.openStore, config = self.config
        let script = engine.options.name
        return [
            "now": { call in call.returning(.int(Self.milliseconds(call.engine.clock.now()))) },
            "load": { call in
                let id = try call.string(1)
                return try call.wait("alert state", { try await openStore().alertRecord(id: id) }) { stack, record in
                    // true, the library's JSON, the current episode's acknowledgement, the script that saved it,
                    // the current episode's snooze from outside the script (`lookout ack --snooze`, the web view)
                    stack.push(true)
                    guard let record else {
                        stack.pushNil()
                        stack.pushNil()
                        stack.pushNil()
                        stack.pushNil()
                        return 5
                    }
                    stack.push(record.data)
                    if let by = record.status.ackedBy, let at = record.status.ackedAt {
                        stack.push(LuaValue.object(["episode": .int(record.status.episode), "by": .text(by), "at": .int(Self.milliseconds(at))]))
                    } else {
                        stack.pushNil()
                    }
                    stack.push(record.status.script)
                    if let by = record.status.snoozedBy, let at = record.status.snoozedAt, let until = record.status.snoozedUntil {
                        stack.push(LuaValue.object(["episode": .int(record.status.episode), "by": .text(by),
                                                    "at": .int(Self.milliseconds(at)), "until": .int(Self.milliseconds(until))]))
                    } else {
                        stack.pushNil()
                    }
                    return 5
                }
            },
            "save": { call in
                let now = call.engine.clock.now()
                let status = AlertStatus(id: try call.string(1), script: script, title: try call.string(2), severity: try call.string(3),
                                         state: try call.string(4), since: Date(timeIntervalSince1970: try call.number(5, in: .epochMilliseconds, what: "since") / 1000),
                                         episode: try call.integer(6), updatedAt: now)
                let data = try call.string(7)
                return try call.wait("alert state", { try await openStore().saveAlert(status, data: data, now: now) }) { stack, _ in
                    stack.push(true)
                    return 1
                }
            },
            "ack": { call in
                let id = try call.string(1)
                let by = try call.string(2)
                let now = call.engine.clock.now()
                return try call.wait("alert.ack", {
                    do {
                        return try await openStore().ackAlert(id: id, by: by, at: now, episode: nil)
                    } catch let error as AlertAckError {
                        throw LuaErrorInfo(code: error.code, message: error.description, service: "alert")
                    }
                }) { stack, status in
                    stack.push(LuaValue.object([
                        "id": .text(status.id), "episode": .int(status.episode), "by": .text(status.ackedBy ?? by),
                        "at": .int(Self.milliseconds(status.ackedAt ?? now)),
                    ]))
                    return 1
                }
            },
            "duration": { call in
                // seconds inside LuaRange.duration, or nil and the problem (`got` names the text)
                let seconds = try call.number(1)
                if let ok = LuaRange.duration.check(seconds) { return call.returning(.double(ok)) }
                let got = try call.optionalString(2) ?? LuaRange.numberText(seconds)
                return call.returning(.nil, .text(LuaRange.duration.problem("duration", got: got)))
            },
            "local_minutes": { call in
                let date = Date(timeIntervalSince1970: try call.number(1, in: .epochMilliseconds, what: "time") / 1000)
                let parts = Calendar.current.dateComponents(in: TimeZone.current, from: date)
                return call.returning(.int(Int64((parts.hour ?? 0) * 60 + (parts.minute ?? 0))))
            },
            "channels": { call in call.returning(.array(config.profiles(service: "notify").map { .text($0) })) },
            "has_channel": { call in
                call.returning(.bool(config.profile(service: "notify", name: try call.string(1)) != nil))
            },
            "warn": { call in
                call.engine.options.warnings(try call.string(1))
                return .nothing
            },
        ]
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
