import Foundation
import Lua



/// `store.update(key, fn)`: Lua code (so `fn` may wait) over private bindings.
///
/// 1. take the in-process lock of (database, script, key), waiting while another task holds it;
/// 2. read the value, call `fn(old)`, write the result only if the value is still what was read
///    (compare-and-swap in one transaction); if something else changed it meanwhile (another
///    process, or `store.set`), read again and call `fn` again, at most 20 times;
/// 3. release the lock from a to-be-closed variable, so errors in `fn` and cancelled tasks
///    release it too.
enum StoreUpdate {

    /// Defines `store.update` in the module table on top of `stack`.
    static func install(session: StoreSession, engine: LuaEngine, stack: LuaStack) throws {
        let module = stack.absolute(-1)
        try stack.load(PackageResources.store_update_lua, name: "=[lookout] store", what: "store")
        stack.pushCopy(of: module)
        pushPrimitives(session: session, engine: engine, stack: stack)
        try stack.protectedCall(arguments: 2, results: 0, what: "store")
    }

    private static func pushPrimitives(session: StoreSession, engine: LuaEngine, stack: LuaStack) {
        let locks = StoreUpdateLocks.shared
        func lockKey(_ key: String) -> StoreUpdateLocks.Key {
            StoreUpdateLocks.Key(database: session.databaseID, script: session.script, key: key)
        }
        let primitives: [String: LuaBinding] = [
            // (key, fn) -> nil, or the message of a bad argument (raised by the Lua side at the caller)
            "check": { call in
                do throws(LuaRaise) {
                    _ = try StoreSession.key(call, 1)
                    guard call.stack.kind(at: call.index(2)) == .function else {
                        let got = call.stack.kind(at: call.index(2)) == .none ? "no value" : call.stack.typeName(at: call.index(2))
                        throw call.argumentError(2, "function expected, got \(got)")
                    }
                    return .nothing
                } catch {
                    return call.returning(.text(error.message))
                }
            },
            // key -> token | false, holder token | nil, message (this task holds it already)
            "lock": { call in
                let key = try StoreSession.key(call, 1)
                guard let task = call.engine.currentTask else { throw LuaRaise("store.update must be called from a task") }
                let owner = StoreUpdateLocks.Owner(engine: ObjectIdentifier(call.engine), task: task.id)
                switch locks.tryLock(lockKey(key), owner: owner) {
                case .acquired(let token): return call.returning(.int(Int64(bitPattern: token)))
                case .busy(let holder): return call.returning(false, .int(Int64(bitPattern: holder)))
                case .heldByCaller:
                    return call.returning(
                        .nil, .text("store.update: \(String(reflecting: key)) is already being updated by this task "
                            + "(a nested store.update of the same key would wait for itself)"))
                }
            },
            // key, holder token: waits until that holder released the key
            "wait": { call in
                let key = lockKey(try StoreSession.key(call, 1))
                let holder = UInt64(bitPattern: try call.integer(2))
                return try call.wait("store.update lock", { await locks.waitForRelease(key, holder: holder) }) { _, _ in 0 }
            },
            "unlock": { call in
                locks.unlock(lockKey(try StoreSession.key(call, 1)), token: UInt64(bitPattern: try call.integer(2)))
                return .nothing
            },
            // key -> true, value, raw JSON | false, err
            "read": { call in
                let key = try StoreSession.key(call, 1)
                let script = session.script
                let engine = call.engine
                return try call.wait("store.update read", session.run { try await $0.value(script: script, key: key) }) {
                    stack, result in
                    switch result {
                    case .success(let json?):
                        stack.push(true)
                        if let problem = StoreSession.pushDecoded(json, key: key, on: stack, engine: engine) {
                            stack.pop()
                            stack.push(false)
                            engine.push(error: problem, on: stack)
                            return 2
                        }
                        stack.push(bytes: json)
                        return 3
                    case .success(nil):
                        stack.push(true)
                        return 1
                    case .failure(let error):
                        stack.push(false)
                        engine.push(error: error, on: stack)
                        return 2
                    }
                }
            },
            // key, raw JSON read (or nil), new value -> true | false (changed meanwhile) | nil, err | nil, message
            "swap": { call in
                let key = try StoreSession.key(call, 1)
                let expected = call.isNil(2) ? nil : try call.bytes(2)
                let json: [UInt8]?
                do throws(LuaJSONError) {
                    json = call.isNil(3) ? nil : try LuaJSONCodec.encode(call.stack, at: call.index(3))
                } catch {
                    return call.returning(
                        .nil, .text("store.update: the function returned a value that is not JSON-encodable: \(error.message)"))
                }
                let script = session.script, quota = session.quota
                let engine = call.engine
                return try call.wait("store.update write", session.run {
                    if json != nil { try $0.requireRoom() }
                    return try await $0.replaceValue(script: script, key: key, expected: expected, with: json, quota: quota)
                }) { stack, result in
                    switch result {
                    case .success(let replaced):
                        stack.push(replaced)
                        return 1
                    case .failure(let error):
                        return StoreSession.fail(error, on: stack, engine: engine)
                    }
                }
            },
            // -> whether store.update may wait where it was called (coroutine.isyieldable() is false
            // in a task's own body, where it may)
            "can_wait": { call in
                call.stack.push(call.canWait)
                return .values(1)
            },
            "conflict": { call in
                let key = try StoreSession.key(call, 1)
                let attempts = try call.integer(2)
                call.engine.push(error: LuaErrorInfo(
                    code: "conflict", message: "store.update: \(String(reflecting: key)) kept changing while it was "
                        + "being updated (\(attempts) attempts)", retryable: true), on: call.stack)
                return .values(1)
            },
        ]
        stack.pushTable(fields: primitives.count + 1)
        for (name, body) in primitives {
            engine.pushFunction("store.update", on: stack, body)
            stack.setField(name, in: -2)
        }
        stack.push("store.update cannot wait here: it was called from code that cannot yield (a table.sort "
            + "comparator, a string.gsub callback, __tostring, __gc, or the top level of a required file); call it "
            + "from the script body, a function, or task.spawn(fn)")
        stack.setField("cannot_wait", in: -2)
    }
}
