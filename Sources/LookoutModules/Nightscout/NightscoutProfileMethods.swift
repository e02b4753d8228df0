import Foundation
import Lua
import NightscoutKit

/// The methods of the table `home:profile()` returns: schedule lookups in the profile's time zone
/// (`p:basal()`, `p:sens(at)`, `p:carbratio(at, "Weekend")`, `p:targets()`, `p:value(kind, at)`),
/// done by NightscoutKit's `Profile.value(_:at:)`.
enum NightscoutProfileMethods {
    /// Registry key of the metatable.
    static let metatableKey = "lookout.nightscout.profile_mt"

    /// Creates the metatable (once per state).
    static func register(engine: LuaEngine, stack: LuaStack) {
        guard stack.ensure(4) else { return }
        if stack.rawField(metatableKey, of: LuaStack.registry) == .table { stack.pop(); return }
        stack.pop()
        stack.pushTable(fields: 2)
        stack.push("nightscout profile")
        stack.setField("__name", in: -2)
        engine.pushLibrary([
            "value": { call in
                let name = try call.string(1)
                guard let kind = ProfileScheduleKind(rawValue: name) else {
                    let known = ProfileScheduleKind.allCases.map(\.rawValue).joined(separator: ", ")
                    throw call.argumentError(1, "unknown schedule '\(name)' (known: \(known))")
                }
                return try lookup(call, kind, at: 2)
            },
            "basal": { call in try lookup(call, .basal, at: 1) },
            "sens": { call in try lookup(call, .sens, at: 1) },
            "carbratio": { call in try lookup(call, .carbratio, at: 1) },
            "targets": { call in
                let low = try value(call, .targetLow, at: 1), high = try value(call, .targetHigh, at: 1)
                return call.returning(low.map(LuaValue.double) ?? .nil, high.map(LuaValue.double) ?? .nil)
            },
        ], prefix: "profile:", method: true, on: stack)
        stack.setField("__index", in: -2)
        stack.setField(metatableKey, in: LuaStack.registry)
    }

    /// Sets the metatable on the profile table at `index`.
    static func attach(to index: Int32, stack: LuaStack) {
        let t = stack.absolute(index)
        guard stack.ensure(2) else { return }
        stack.rawField(metatableKey, of: LuaStack.registry)
        stack.setMetatable(of: t)
    }

    static func lookup(_ call: LuaCall, _ kind: ProfileScheduleKind, at n: Int) throws(LuaRaise) -> LuaReturn {
        call.returning(try value(call, kind, at: n).map(LuaValue.double) ?? .nil)
    }

    /// The value of `kind` at argument `n` (a time, default now) in the named profile (argument
    /// `n + 1`, default the set's active profile: `defaultProfile`, else the first by name); `nil`
    /// when that schedule is empty. A name the store lacks raises.
    static func value(_ call: LuaCall, _ kind: ProfileScheduleKind, at n: Int) throws(LuaRaise) -> Double? {
        let at: Date
        do throws(LuaRaise) {
            at = call.isNil(n) ? call.engine.clock.now() : try NightscoutTimeArgument.date(try call.value(n, name: "at"), what: "at")
        } catch {
            throw call.argumentError(n, error.message)
        }
        let set: ProfileSet
        do {
            let json = try LuaJSONCodec.encode(call.stack, at: call.index(0))
            set = try JSONDecoder().decode(ProfileSet.self, from: Data(json))
        } catch {
            throw LuaRaise("profile: not a Nightscout profile document (\(error))")
        }
        // Without a name: the set's `defaultProfile`, or the first profile when that is missing
        // or names none in the store (`ProfileSet.activeProfile`, as xDrip4iOS reads it).
        guard let name = try call.optionalString(n + 1) else {
            guard let profile = set.activeProfile else {
                throw LuaRaise("profile: the document has no profiles in its store")
            }
            return profile.value(kind, at: at)
        }
        guard let profile = set.store[name] else {
            let known = set.store.keys.sorted().joined(separator: ", ")
            throw LuaRaise("profile: no profile named '\(name)' (the document has: \(known.isEmpty ? "none" : known))")
        }
        return profile.value(kind, at: at)
    }
}
