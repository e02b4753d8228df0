import Lua
import LookoutTestSupport

/// A module for tests: bindings that await Swift async work and expose values to Swift.
struct TestKitModule: LuaModule {
    let name = "testkit"
    let stub = "---@meta testkit\n--- Test helpers.\nlocal testkit = {}\nreturn testkit\n"

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.pushLibrary([
            // Awaits Task.sleep, then returns its argument (or nil, err when told to fail).
            "swift_sleep": { call in
                let seconds = try call.number(1)
                let fail = try call.boolean(2)
                return try call.wait("swift sleep", {
                    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                    if fail { throw LuaErrorInfo(code: "test", message: "asked to fail", retryable: true, service: "testkit") }
                    return seconds
                }, deliver: { stack, value in
                    stack.push(value)
                    return 1
                })
            },
            // Converts argument 1 to Swift and back (exercises both directions).
            "roundtrip": { call in
                let value = try call.value(1, name: "value")
                call.stack.push(value)
                return .values(1)
            },
            // Describes argument 1 as Swift sees it.
            "describe": { call in
                let value = try call.value(1, name: "opts")
                call.stack.push(String(describing: value))
                return .values(1)
            },
        ], prefix: "testkit.", on: stack)
    }
}
