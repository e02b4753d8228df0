import CLua
import LuaShim

/// `task`: spawn, wait, all, current, yield; handles with cancel, status, wait.
struct TaskModule: LuaModule {
    let name = "task"
    let isGlobal = true
    var stub: String { String(decoding: PackageResources.task_lua, as: UTF8.self) }

    /// Most live tasks one script may have.
    static let maximumTasks = 100_000

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.register(type: TaskHandle.type, methods: [
            "cancel": { call in
                let handle = try call.object(as: TaskHandle.self, type: TaskHandle.type)
                guard handle.task !== call.engine.currentTask else {
                    throw LuaRaise("a task cannot cancel itself; return from it instead")
                }
                let wasLive = !handle.task.isFinished
                call.engine.cancel(handle.task)
                call.stack.push(wasLive)
                return .values(1)
            },
            "status": { call in
                let handle = try call.object(as: TaskHandle.self, type: TaskHandle.type)
                call.stack.push(handle.task.status.rawValue)
                return .values(1)
            },
            "wait": { call in
                let handle = try call.object(as: TaskHandle.self, type: TaskHandle.type)
                return try TaskModule.wait(for: handle.task, timeoutArgument: 1, call)
            },
        ])
        engine.pushLibrary([
            "spawn": { call in
                guard lua_type(call.L, call.index(1)) == LUA_TFUNCTION else {
                    throw call.argumentError(1, "function expected, got \(call.stack.typeName(at: call.index(1)))")
                }
                guard call.engine.tasks.count < TaskModule.maximumTasks else {
                    throw LuaRaise("too many tasks (limit \(TaskModule.maximumTasks))")
                }
                let L = call.L
                let first = call.index(1)
                let count = lua_gettop(L) - first + 1
                let site = call.engine.callSite(of: L)
                let task = call.engine.spawn(label: "task spawned at \(site)") { stack in
                    // The function and its arguments are the top `count` values of the caller's
                    // stack: move them (no copy on the caller's stack), once the new thread has room.
                    guard stack.ensure(count + 1) else { return nil }
                    lua_xmove(L, stack.L, count)
                    return count - 1
                }
                task.keepsOutcome = true
                call.push(object: TaskHandle(task: task, engine: call.engine), type: TaskHandle.type)
                return .values(1)
            },
            "wait": { call in
                let handle = try call.object(1, as: TaskHandle.self, type: TaskHandle.type)
                return try TaskModule.wait(for: handle.task, timeoutArgument: 2, call)
            },
            "current": { call in
                guard let task = call.engine.currentTask else { return .values(0) }
                call.push(object: TaskHandle(task: task, engine: call.engine), type: TaskHandle.type)
                return .values(1)
            },
            "yield": { call in
                try call.engine.beginWait(
                    in: call, what: "its turn", hostWork: true,
                    deliver: { _, _, _ in 0 },
                    start: { engine, id in
                        let runtime = engine.runtime
                        Task { await runtime.complete(wait: id, result: .success(TimerFired())) }
                        return {}
                    })
            },
        ], prefix: "task.", on: stack)
        // task.all is plain Lua over task.wait.
        try stack.load(PackageResources.task_all_lua, name: "=[lookout] task.all", what: "task.all")
        stack.pushCopy(of: -2)
        try stack.protectedCall(arguments: 1, results: 0, what: "task.all")
    }

    /// `task.wait(t, timeout)`: `true, results…` or `false, err`.
    static func wait(for target: LuaTask, timeoutArgument: Int, _ call: LuaCall) throws -> LuaReturn {
        let timeout = call.isNil(timeoutArgument) ? nil : try call.duration(timeoutArgument)
        guard target !== call.engine.currentTask else { throw LuaRaise("a task cannot wait for itself") }
        if target.isFinished {
            return .values(pushOutcome(of: target, engine: call.engine, on: call.stack))
        }
        target.waiters += 1
        var counted = true
        return try call.engine.beginWait(
            in: call, what: "task \(target.label)",
            deliver: { engine, stack, result in
                defer {
                    if counted {
                        target.waiters -= 1
                        counted = false
                    }
                    target.releaseOutcomeIfUnused(engine: engine)
                }
                if case .success(let value) = result, value is TimerFired {
                    stack.push(false)
                    engine.push(error: LuaErrorInfo(code: "timeout", message: "the task did not end in time", retryable: true), on: stack)
                    return 2
                }
                return pushOutcome(of: target, engine: engine, on: stack)
            },
            start: { engine, id in
                target.onEnd.append { [weak engine] _ in engine?.complete(wait: id, result: .success(TaskEnded())) }
                if let timeout { engine.armTimer(id: id, after: timeout) }
                return { [weak engine] in
                    engine?.cancelTimer(id: id)
                    if counted {
                        target.waiters -= 1
                        counted = false
                    }
                }
            })
    }

    /// Pushes `true, results…`, or `false, err`.
    static func pushOutcome(of task: LuaTask, engine: LuaEngine, on stack: LuaStack) -> Int32 {
        let L = stack.L
        switch task.status {
        case .done:
            stack.push(true)
            guard task.outcomeRef != LUA_NOREF else { return 1 }
            lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(task.outcomeRef))
            stack.rawField("n", of: -1)
            let n = Int32(clamping: stack.integer(at: -1) ?? 0)
            stack.pop()
            guard stack.ensure(n + 1) else {
                // Too many results for the waiting thread's stack: report it instead of overflowing.
                stack.pop(2)
                stack.push(false)
                engine.push(error: LuaErrorInfo(code: "failed", message: "stack overflow: \(n) results do not fit"), on: stack)
                return 2
            }
            for i in 0..<n { lua_rawgeti(L, -1 - i, lua_Integer(i + 1)) }
            shim_remove(L, -(n + 1))
            return n + 1
        case .cancelled:
            stack.push(false)
            engine.push(error: LuaErrorInfo(code: "cancelled", message: "\(task.label) was cancelled"), on: stack)
            return 2
        default:
            stack.push(false)
            let text = task.errorText ?? "failed"
            let error = engine.scriptError(task: task, text: text)
            var info = LuaErrorInfo(code: "failed", message: error.message)
            info.details["traceback"] = .text(error.traceback)
            info.details["task"] = .text(error.task)
            engine.push(error: info, on: stack)
            if task.outcomeRef != LUA_NOREF {
                lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(task.outcomeRef))
                stack.setField("error", in: -2)
            }
            return 2
        }
    }
}

extension LuaTask {
    /// Frees kept results once no handle and no waiter can ask for them.
    func releaseOutcomeIfUnused(engine: LuaEngine) {
        guard handles == 0, waiters == 0, isFinished, outcomeRef != LUA_NOREF else { return }
        luaL_unref(engine.L, SHIM_REGISTRYINDEX, outcomeRef)
        outcomeRef = LUA_NOREF
    }
}

/// The end of a waited-for task (a wait result).
struct TaskEnded: Sendable {}

/// The userdata behind a `task.Task` handle.
final class TaskHandle: LuaObject {
    static let type = LuaObjectType(name: "lookout.task", displayName: "task")
    let task: LuaTask
    unowned(unsafe) let engine: LuaEngine  // handles die with their state, before the engine

    init(task: LuaTask, engine: LuaEngine) {
        self.task = task
        self.engine = engine
        task.handles += 1
    }

    deinit {
        // Runs from __gc on the executor thread: the last handle frees the kept results.
        task.handles -= 1
        if !engine.closed { task.releaseOutcomeIfUnused(engine: engine) }
    }

    var luaDescription: String { "task (\(task.status.rawValue)): \(task.label)" }
    func luaClose(engine: LuaEngine) { engine.cancel(task) }
}
