import Foundation
import Lua
import SignalKKit

/// `for d in boat:deltas{paths={…}} do … end` and `boat:on(pattern, fn)`.
///
/// - The boat's pump task (one per boat) copies each matching change into a bounded buffer per
///   loop (`SignalKDeltaBuffer`; default 4096 values, `opts.buffer`; when full the **oldest** are
///   dropped, counted, and a warning is written once per loop).
/// - The loop's Swift primitive `fetch()` hands over everything buffered (up to 512 values) as
///   one Lua list **without waiting**; only when the buffer is empty does it wait (the task
///   yields) until the pump wakes it. The iterator itself is Lua, walking the list.
/// - `deltas` returns a to-be-closed 4th value (the loop's cursor), so Lua 5.4 closes it when the
///   loop ends, breaks, raises, or its task is cancelled: the buffer is unregistered at once.
///   A cursor that is dropped without a `for` loop is closed when it is collected.
/// - `on` is Lua over the same loop: one runner task calls the loop's `spawn_each(fn)`, which
///   takes what is buffered (up to 512 values) and starts `fn(d)` as a task of its own per value,
///   each `d` built straight on that task's stack (no list, no `task.spawn` handle per value),
///   on a thread an earlier handler call returned from without waiting (`spawnCall`'s
///   `reusesThreads`);
///   it waits like `fetch()` when nothing is buffered. `handle:stop()` closes the loop and
///   cancels the runner. The task limit of `task.spawn` holds: at the limit the runner fails.
/// - The host anchors what it runs: a boat whose `<close>` variable goes out of scope while `on`
///   handlers run stays open until the last of them stops (or the script ends), so
///   `local boat <close> = signalk.connect "boat"` then `boat:on(…)` keeps working after the
///   main chunk ends. `boat:close()` closes at once, handlers included.
extension SignalKLuaBoat {
    /// The cursor of one loop (the 4th value of the generic `for`).
    final class DeltaCursor: LuaObject {
        static let type = LuaObjectType(name: "lookout.signalk.deltas", displayName: "signalk deltas loop")
        let buffer: SignalKDeltaBuffer
        let feed: SignalKFeed
        private(set) var isClosed = false
        var warnedAboutDrops = false

        init(buffer: SignalKDeltaBuffer, feed: SignalKFeed) {
            self.buffer = buffer
            self.feed = feed
            feed.add(buffer)
        }

        deinit { close() }

        var luaDescription: String { "signalk deltas loop" + (isClosed ? " (closed)" : "") }
        func luaClose(engine: LuaEngine) { close() }

        func close() {
            guard !isClosed else { return }
            isClosed = true
            feed.remove(buffer)
            buffer.finish()
        }
    }

    /// Values handed to Lua per `fetch()`.
    static let batchSize = 512
    static let defaultBuffer = 4096
    static let deltaOptionNames: Set<String> = ["paths", "context", "buffer", "meta"]

    /// The Lua side: `deltas` and `on` are added to the boat's methods.

    /// Registers the cursor type and adds `deltas`/`on` to the boat's methods table.
    static func installStreamMethods(engine: LuaEngine, stack: LuaStack) throws {
        engine.register(type: DeltaCursor.type, methods: [
            "close": { call in
                let cursor = try call.object(as: DeltaCursor.self, type: DeltaCursor.type)
                cursor.close()
                return .nothing
            }
        ])
        guard stack.ensure(6) else { throw LuaRaise("signalk: stack overflow") }
        stack.rawField(type.name, of: LuaStack.registry)  // the boat's metatable
        guard stack.rawField("__index", of: -1) == .table else {
            stack.pop(2)
            throw LuaRaise("signalk: the boat's methods table is missing")
        }
        do {
            try stack.load(PackageResources.stream_methods_lua, name: "=[lookout] signalk.boat", what: "signalk")
        } catch {
            stack.pop(2)  // the metatable and the methods table
            throw error
        }
        stack.insert(at: -3)  // chunk, metatable, methods
        stack.insert(at: -2)  // chunk, methods, metatable
        engine.pushFunction("signalk.boat:deltas", method: true, on: stack) { call in try openDeltas(call) }
        stack.insert(at: -2)  // chunk, methods, open, metatable (`on` keeps a <close>d boat open for its handlers)
        try stack.protectedCall(arguments: 3, results: 0, what: "signalk")
    }

    /// `open(boat, opts)`: registers a loop and returns its `fetch` function, cursor and
    /// `spawn_each(fn)` (for `on`).
    static func openDeltas(_ call: LuaCall) throws -> LuaReturn {
        let boat = try boat(call)
        let opts = try call.options(1)
        if let unknown = opts.keys.sorted().first(where: { !deltaOptionNames.contains($0) }) {
            throw call.argumentError(1, "unknown option '\(unknown)' (known: \(deltaOptionNames.sorted().joined(separator: ", ")))")
        }
        var paths: [SignalKPattern] = []
        switch opts["paths"] {
        case nil: break
        case .string(let s)?: paths = [SignalKPattern(s.description)]
        case .array(let items)?:
            for (i, item) in items.enumerated() {
                guard let p = item.text else { throw call.argumentError(1, "opts.paths[\(i + 1)]: expected a string") }
                paths.append(SignalKPattern(p))
            }
        default: throw call.argumentError(1, "opts.paths: expected a list of path patterns")
        }
        var context: SignalKPattern?
        if let c = opts["context"] {
            guard let text = c.text else { throw call.argumentError(1, "opts.context: expected a string") }
            context = SignalKPattern(text)
        }
        var capacity = defaultBuffer
        if let b = opts["buffer"] {
            guard let n = b.int, n >= 1, n <= 1_000_000 else { throw call.argumentError(1, "opts.buffer: expected an integer from 1 to 1000000") }
            capacity = Int(n)
        }
        var meta = false
        if let m = opts["meta"] {
            guard case .bool(let b) = m else { throw call.argumentError(1, "opts.meta: expected a boolean") }
            meta = b
        }
        let cursor = DeltaCursor(
            buffer: SignalKDeltaBuffer(capacity: capacity, paths: paths, context: context, meta: meta), feed: boat.feed)
        let buffer = cursor.buffer
        call.engine.pushFunction("signalk.boat:deltas", on: call.stack) { call in
            let (items, finished, dropped) = buffer.take(batchSize)
            if !items.isEmpty {
                warnIfDropped(cursor, dropped, engine: call.engine)
                pushBatch(items, on: call.L)
                return .values(1)
            }
            if finished || cursor.isClosed { return .values(0) }
            return try call.wait("signalk deltas", event: true, {
                await buffer.waitForData()
                return true
            }) { [engine = call.engine] stack, _ in
                let (items, finished, dropped) = buffer.take(batchSize)
                if items.isEmpty {
                    if finished || cursor.isClosed { stack.pushNil() } else { stack.push(false) }  // false: ask again
                    return 1
                }
                warnIfDropped(cursor, dropped, engine: engine)
                pushBatch(items, on: stack.L)
                return 1
            }
        }
        call.push(object: cursor, type: DeltaCursor.type)
        let label = "boat:on handler for '\(paths.first?.pattern ?? "*")'"
        call.engine.pushFunction("signalk.boat:on", on: call.stack) { call in
            guard call.stack.kind(at: call.index(1)) == .function else {
                throw call.argumentError(1, "function expected, got \(call.stack.typeName(at: call.index(1)))")
            }
            if cursor.isClosed { return .values(0) }
            let room = call.engine.spawnableTaskCount
            guard room > 0 else { throw LuaRaise("too many tasks (limit \(call.engine.taskLimit))") }
            let (items, finished, dropped) = buffer.take(min(batchSize, room))
            if !items.isEmpty {
                warnIfDropped(cursor, dropped, engine: call.engine)
                for item in items {
                    call.engine.spawnCall(of: call.index(1), on: call.stack, label: label, reusesThreads: true) { stack in
                        guard stack.ensure(8) else { return nil }
                        pushChange(item, on: stack)
                        return 1
                    }
                }
                call.stack.push(true)
                return .values(1)
            }
            if finished { return .values(0) }
            return try call.wait("signalk deltas", event: true, {
                await buffer.waitForData()
                return true
            }) { stack, _ in
                // Ask again: the next call takes the values on its own stack.
                if buffer.take(0).finished || cursor.isClosed { stack.pushNil() } else { stack.push(false) }
                return 1
            }
        }
        return .values(3)
    }

    private static func warnIfDropped(_ cursor: DeltaCursor, _ dropped: Int, engine: LuaEngine) {
        guard dropped > 0, !cursor.warnedAboutDrops else { return }
        cursor.warnedAboutDrops = true
        engine.options.warnings("signalk: a deltas loop is slower than the stream; the oldest values are dropped "
            + "(buffer \(cursor.buffer.capacity) values; raise it with opts.buffer)")
    }

    /// Pushes a list of `{context, path, value, source, timestamp}` tables.
    static func pushBatch(_ items: [SignalKChange], on L: OpaquePointer) {
        let stack = LuaStack(L)
        guard stack.ensure(8) else { return stack.pushNil() }
        stack.pushTable(array: items.count)
        for (i, c) in items.enumerated() {
            pushChange(c, on: stack)
            stack.setIndex(i + 1, in: -2)
        }
    }

    /// Pushes one `{context, path, value, source, timestamp}` table (a meta change has `meta`, the
    /// path's metadata, instead of `value`; the caller ensured room for 8 values).
    static func pushChange(_ c: SignalKChange, on stack: LuaStack) {
        stack.pushTable(fields: 5)
        stack.push(c.context)
        stack.setField("context", in: -2)
        stack.push(c.path)
        stack.setField("path", in: -2)
        SignalKLuaValues.push(c.value, on: stack)
        stack.setField(c.isMeta ? "meta" : "value", in: -2)
        if let s = c.sourceRef {
            stack.push(s)
            stack.setField("source", in: -2)
        }
        if let t = c.timestamp {
            // Written on the native stack and copied into Lua: no text allocated per delta.
            SignalKTimestamp.withFormatted(t) { stack.push(bytes: UnsafeRawBufferPointer($0)) }
            stack.setField("timestamp", in: -2)
        }
    }
}
