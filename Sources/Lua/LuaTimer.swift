import CLua
import LuaShim

/// A timer made by `timer.after` or `timer.every`. The engine keeps it alive until it fires for
/// the last time or is stopped, so scripts never lose a timer to the garbage collector.
final class LuaTimer: LuaObject {
    static let type = LuaObjectType(name: "lookout.timer", displayName: "timer")
    /// A repeating timer stops after this many failed callbacks in a row (unless told otherwise).
    static let errorsBeforeStop = 5

    let id: UInt64
    let interval: Double
    let repeats: Bool
    let continueOnError: Bool
    let createdAt: String
    /// The callback and its arguments (a table `{fn, ...args, n=}`), anchored in the registry.
    private var callbackRef: Int32
    private var deadline: Int64
    private(set) var isRunning = true
    private var activeTask: LuaTask?
    private var failuresInARow = 0
    private(set) var skippedTicks = 0

    init(id: UInt64, interval: Double, repeats: Bool, continueOnError: Bool, createdAt: String, callbackRef: Int32, deadline: Int64) {
        self.id = id
        self.interval = interval
        self.repeats = repeats
        self.continueOnError = continueOnError
        self.createdAt = createdAt
        self.callbackRef = callbackRef
        self.deadline = deadline
    }

    var luaDescription: String {
        let kind = repeats ? "every \(Quantities.formatDuration(interval))" : "after \(Quantities.formatDuration(interval))"
        return "timer \(kind), created at \(createdAt)" + (isRunning ? "" : " (stopped)")
    }

    func luaClose(engine: LuaEngine) { stop(engine: engine) }

    /// Runs the callback as a new task; re-arms a repeating timer.
    func fire(engine: LuaEngine) {
        guard isRunning else { return }
        if let active = activeTask, !active.isFinished {
            skippedTicks += 1  // the previous run is still going: never pile up runs
        } else {
            let ref = callbackRef
            let task = engine.spawn(label: "timer created at \(createdAt)") { stack in
                let L = stack.L
                // A new thread has room for LUA_MINSTACK values; more are asked for below.
                guard stack.ensure(2) else { return nil }
                lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(ref))  // {fn, args..., n = count}
                let table = lua_gettop(L)
                stack.rawField("n", of: table)
                let count = Int32(clamping: stack.integer(at: -1) ?? 0)
                shim_pop(L, 1)
                guard count >= 1, stack.ensure(count + 1) else {
                    shim_pop(L, 1)
                    return nil
                }
                for i in 0..<count { lua_rawgeti(L, table, lua_Integer(i + 1)) }
                shim_remove(L, table)
                return count - 1
            }
            activeTask = task
            task.onEnd.append { [weak self, weak engine] (task: LuaTask) in
                guard let self, let engine else { return }
                self.ended(task, engine: engine)
            }
        }
        if repeats {
            let now = engine.executor.now
            let step = max(1, Quantities.nanoseconds(interval))
            deadline = Quantities.deadline(deadline, after: step)
            if deadline <= now {  // behind (the machine slept): skip to the next tick in the future
                let missed = (now - deadline) / step + 1
                deadline = Quantities.deadline(deadline, after: missed.multipliedReportingOverflow(by: step).overflow ? .max : missed * step)
                skippedTicks += Int(missed)
            }
            engine.executor.schedule(timer: id, at: deadline)
        } else {
            release(engine: engine)
        }
    }

    private func ended(_ task: LuaTask, engine: LuaEngine) {
        if task.status == .failed {
            failuresInARow += 1
            if repeats, !continueOnError, failuresInARow >= LuaTimer.errorsBeforeStop, isRunning {
                engine.options.warnings(
                    "\(luaDescription): stopped after \(failuresInARow) failed runs in a row "
                        + "(create it with {continue_on_error = true} to keep it running)")
                stop(engine: engine)
            }
        } else {
            failuresInARow = 0
        }
        engine.checkIdle()
    }

    /// Stops the timer; a callback already running finishes.
    @discardableResult
    func stop(engine: LuaEngine) -> Bool {
        guard isRunning else { return false }
        engine.executor.cancel(timer: id)
        release(engine: engine)
        return true
    }

    private func release(engine: LuaEngine) {
        isRunning = false
        engine.timerObjects[id] = nil
        if callbackRef != LUA_NOREF {
            luaL_unref(engine.L, SHIM_REGISTRYINDEX, callbackRef)
            callbackRef = LUA_NOREF
        }
        engine.checkIdle()
    }
}
