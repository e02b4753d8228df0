import Foundation
import Lua
import LookoutTestSupport

/// A module for tests: bindings that await Swift async work and expose values to Swift.
struct TestKitModule: LuaModule {
    let name = "testkit"
    let stub = "---@meta testkit\n--- Test helpers.\nlocal testkit = {}\nreturn testkit\n"

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.register(type: Probe.type, methods: [
            "name": { call in
                let probe = try call.object(as: Probe.self, type: Probe.type)
                call.stack.push(probe.name)
                return .values(1)
            },
            "close": { call in
                let probe = try call.object(as: Probe.self, type: Probe.type)
                probe.luaClose(engine: call.engine)
                return .nothing
            },
            // probe:add(a, b): integer arguments of a method (argument #1 is at stack index 2).
            "add": { call in
                _ = try call.object(as: Probe.self, type: Probe.type)
                call.stack.push(try call.integer(1) &+ call.integer(2))
                return .values(1)
            },
        ])
        engine.pushLibrary([
            // A host object whose Swift lifetime the test can observe.
            "probe": { call in
                call.push(object: Probe(name: try call.string(1)), type: Probe.type)
                return .values(1)
            },
            "live_probes": { call in
                call.stack.push(Probe.live.value)
                return .values(1)
            },
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
            // Waits like a stream for its next message (an event wait: virtual time moves on).
            "event_wait": { call in
                let seconds = try call.number(1)
                return try call.wait("test event", event: true, {
                    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                    return true
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
            // Starts fn(i) as a task per i in 1…n the way a Signal K `on` handler runs per delta
            // (spawnCall with reusesThreads).
            "spawn_each": { call in
                let fn = call.index(1)
                guard call.stack.kind(at: fn) == .function else { throw call.argumentError(1, "function expected") }
                let n = try call.integer(2)
                for i in 0..<n {
                    call.engine.spawnCall(of: fn, on: call.stack, label: "testkit handler", reusesThreads: true) { stack in
                        stack.push(i + 1)
                        return 1
                    }
                }
                return .nothing
            },
            // Argument checks as bindings make them: testkit.args(kind, n, ...) reads argument n
            // (after kind and n themselves) as an "integer" or a "number".
            "args": { call in
                let kind = try call.string(1)
                let n = Int(try call.integer(2))
                switch kind {
                case "integer": call.stack.push(try call.integer(n + 2))
                case "number": call.stack.push(try call.number(n + 2))
                default: throw call.argumentError(1, "integer or number expected")
                }
                return .values(1)
            },
            // How many tasks ran on a reused thread so far.
            "reused_threads": { call in
                call.stack.push(call.engine.reusedThreadCount)
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

/// A host object for userdata tests: counts live instances, closes once.
final class Probe: LuaObject {
    static let type = LuaObjectType(name: "testkit.Probe", displayName: "probe")
    static let live = Counter()
    let name: String
    var closed = false

    init(name: String) {
        self.name = name
        Probe.live.add(1)
    }

    deinit { Probe.live.add(-1) }

    var luaDescription: String { "probe \(name)" + (closed ? " (closed)" : "") }

    func luaClose(engine: LuaEngine) {
        guard !closed else { return }
        closed = true
        engine.options.output("closed \(name)")
    }
}

/// A thread-safe counter.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched with `lock` held.
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add(_ n: Int) { lock.withLock { count += n } }
}
