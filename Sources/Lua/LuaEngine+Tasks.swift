import CLua
import LuaShim

/// The scheduler: tasks are coroutines resumed one at a time on the executor thread. A task that
/// waits yields the await token; the scheduler starts the wait's work and resumes the task with the
/// results when it completes.
extension LuaEngine {
    /// The task running now, if any.
    public var currentTask: LuaTask? { current }

    /// Tasks that have not ended, oldest first.
    public var liveTasks: [LuaTask] { tasks.values.sorted { $0.id < $1.id } }

    /// Starts a task. `push` puts the function and its arguments on the new thread and returns
    /// the number of arguments, or nil when they do not fit on its stack (checked with
    /// `LuaStack.ensure`): the task then fails at once with a "stack overflow" error.
    @discardableResult
    public func spawn(label: String, reportErrors: Bool = true, _ push: (LuaStack) -> Int32?) -> LuaTask {
        withMemoryOverdraft {
            let thread = lua_newthread(L)!
            let ref = luaL_ref(L, SHIM_REGISTRYINDEX)
            let task = LuaTask(
                id: nextTaskID, label: label, parentLabel: current?.label, thread: thread, threadRef: ref)
            nextTaskID += 1
            task.reportsErrors = reportErrors
            tasks[task.id] = task
            if let count = push(LuaStack(thread)), count >= 0 {
                task.resumeArgs = count
                ready.append(task)
            } else {
                lua_settop(thread, 0)
                lua_pushstring(thread, "stack overflow: cannot start \(label) (too many arguments)")
                fail(task)
            }
            return task
        }
    }

    /// The most tasks that may be alive at once (`task.spawn` raises beyond it).
    public var taskLimit: Int { TaskModule.maximumTasks }
    /// How many more tasks may be spawned now.
    public var spawnableTaskCount: Int { max(0, TaskModule.maximumTasks - tasks.count) }

    /// Spawns a task that calls the value at `index` of `stack` (a function on the stack of the
    /// running binding) with the arguments `push` leaves on the new task's stack (it returns how
    /// many, or `nil` when they do not fit). For hosts that start a task per event (a Signal K
    /// handler per delta) without `task.spawn`'s handle and per-call label. Returns `false`, and
    /// spawns nothing, at the `task.spawn` limit.
    ///
    /// With `reusesThreads`, the task takes its thread only when it first runs (`push` runs then),
    /// from a pool of threads whose earlier calls returned without waiting: a handler per event
    /// then costs no new coroutine. A thread goes back to the pool only when nothing of the call
    /// can be seen on it any more: the call returned (not failed, not cancelled) without ever
    /// yielding, no hook is set on it, and the script never got hold of it
    /// (`coroutine.running()`); its stack is emptied, and every local and open upvalue of the call
    /// was closed when the call returned.
    @discardableResult
    public func spawnCall(of index: Int32, on stack: LuaStack, label: String, reportErrors: Bool = true,
                          reusesThreads: Bool = false, _ push: @escaping (LuaStack) -> Int32?) -> Bool {
        guard tasks.count < TaskModule.maximumTasks else { return false }
        let index = lua_absindex(stack.L, index)
        guard reusesThreads, options.reusesThreads else {
            spawn(label: label, reportErrors: reportErrors) { target in
                guard target.ensure(1) else { return nil }
                lua_pushvalue(stack.L, index)
                lua_xmove(stack.L, target.L, 1)
                return push(target)
            }
            return true
        }
        // One registry reference for the function while tasks of this binding call wait to start.
        let function: PendingFunction
        if let last = pendingFunction, last.users > 0, pendingFunctionMatches(last, stack: stack, index: index) {
            function = last
        } else {
            function = withMemoryOverdraft {
                lua_pushvalue(stack.L, index)
                return PendingFunction(ref: luaL_ref(stack.L, SHIM_REGISTRYINDEX))
            }
            pendingFunction = function
        }
        function.users += 1
        let task = LuaTask(id: nextTaskID, label: label, parentLabel: current?.label, thread: nil, threadRef: LUA_NOREF)
        nextTaskID += 1
        task.reportsErrors = reportErrors
        task.reusesThread = true
        task.pending = PendingCall(function: function, push: push)
        tasks[task.id] = task
        ready.append(task)
        return true
    }

    /// Whether `function`'s referenced value is the value at `index` (the same handler again).
    private func pendingFunctionMatches(_ function: PendingFunction, stack: LuaStack, index: Int32) -> Bool {
        guard stack.ensure(1) else { return false }
        lua_rawgeti(stack.L, SHIM_REGISTRYINDEX, lua_Integer(function.ref))
        defer { stack.pop() }
        return lua_rawequal(stack.L, index, -1) != 0
    }

    /// Gives up one use of a pending function; the last one releases its reference.
    private func release(_ function: PendingFunction) {
        function.users -= 1
        guard function.users == 0 else { return }
        luaL_unref(L, SHIM_REGISTRYINDEX, function.ref)
        if pendingFunction === function { pendingFunction = nil }
    }

    /// Gives a task with a pending call its thread (from the pool, or a new one) and puts the
    /// call on it. Returns false when the arguments did not fit (the task then failed).
    private func start(pending task: LuaTask, _ call: PendingCall) -> Bool {
        task.pending = nil
        defer { release(call.function) }
        return withMemoryOverdraft {
            if let pooled = threadPool.popLast() {
                task.thread = pooled.thread
                task.threadRef = pooled.ref
                reusedThreadCount += 1
            } else {
                task.thread = lua_newthread(L)!
                task.threadRef = luaL_ref(L, SHIM_REGISTRYINDEX)
            }
            let target = LuaStack(task.thread)
            lua_rawgeti(task.thread, SHIM_REGISTRYINDEX, lua_Integer(call.function.ref))  // a thread has LUA_MINSTACK slots
            if let count = call.push(target), count >= 0 {
                task.resumeArgs = count
                return true
            }
            lua_settop(task.thread, 0)
            lua_pushstring(task.thread, "stack overflow: cannot start \(task.label) (too many arguments)")
            fail(task)
            return false
        }
    }

    /// Most threads kept for reuse.
    static let threadPoolLimit = 8

    /// Keeps the thread of a task whose call returned without waiting for the next call, when
    /// nothing of this call can be seen on it; returns false when it cannot be kept.
    private func recycleThread(of task: LuaTask) -> Bool {
        guard task.reusesThread, !task.yieldedOnce, !task.threadEscaped, !closed,
              threadPool.count < LuaEngine.threadPoolLimit,
              let co = task.thread, lua_status(co) == LUA_OK, lua_gettop(co) == 0,
              lua_gethook(co) == nil, lua_gethookmask(co) == 0
        else { return false }
        threadPool.append((co, task.threadRef))
        return true
    }

    /// Resumes ready tasks until none is left. Safe to call from anywhere on the executor: when a
    /// task is already running, the tasks made ready now run when it yields.
    public func drain() {
        guard !draining, !closed else { return }
        draining = true
        while readyHead < ready.count {
            let task = ready[readyHead]
            readyHead += 1
            resume(task)
        }
        ready.removeAll(keepingCapacity: true)
        readyHead = 0
        draining = false
        if exitCode != nil, !isIdle {
            cancelAll()  // script.exit: everything else stops, <close> variables run
        }
        if !yielded.isEmpty {
            // Tasks that yielded to others run again after the jobs already queued (completions).
            ready = yielded
            yielded = []
            let runtime = self.runtime
            executor.hold()  // released by drainLater: virtual time waits for the turn
            Task { await runtime.drainLater() }
        }
        checkIdle()
    }

    private func resume(_ task: LuaTask) {
        guard task.status == .ready else { return }
        if let call = task.pending, !start(pending: task, call) { return }
        let nargs = task.resumeArgs
        task.resumeArgs = 0
        current = task
        task.status = .running
        budget.pointee.tripped = Int32(SHIM_TRIP_NONE)
        budget.pointee.mark = shim_now_ns()
        if options.cpuLimit > 0 {
            budget.pointee.slice_deadline = budget.pointee.mark + budget.pointee.slice_limit_ns
        }
        var nresults: Int32 = 0
        budget.pointee.task_thread = task.thread
        budget.pointee.task_escaped = 0
        let host = shim_set_current(budget, task.thread)
        let status = lua_resume(task.thread, nil, nargs, &nresults)
        shim_set_current(budget, host)
        budget.pointee.task_thread = nil
        if budget.pointee.task_escaped != 0 { task.threadEscaped = true }
        budget.pointee.slice_deadline = 0
        budget.pointee.mark = shim_now_ns()
        current = nil
        withMemoryOverdraft { settle(task, status: status, results: nresults) }
    }

    private func settle(_ task: LuaTask, status: Int32, results: Int32) {
        let co: OpaquePointer = task.thread
        switch status {
        case LUA_YIELD where budget.pointee.trip_yielded != 0:
            // The hook stopped the task at a limit (see shim.c limit_error): it ends with that error,
            // its <close> variables running with the hook on.
            shim_pop(co, results)
            shim_pushtripmessage(co)
            fail(task)
        case LUA_YIELD:
            task.yieldedOnce = true
            let isAwait = results >= 1 && lua_type(co, -1) == LUA_TLIGHTUSERDATA
                && lua_touserdata(co, -1) == shim_await_token()
            shim_pop(co, results)
            if !isAwait {
                task.status = .ready
                yielded.append(task)
            } else if let wait = task.wait, !wait.started {
                task.status = .waiting
                wait.started = true
                if wait.hostWork, executor.isVirtual {
                    executor.hold()
                    wait.holdsClock = true
                }
                if wait.counted {
                    startRequest(wait)
                } else {
                    wait.cancel = wait.start(self, wait.id)
                }
            } else {
                lua_pushstring(co, "internal error: a task waited without work to wait for")
                fail(task)
            }
        case LUA_OK:
            if task.keepsOutcome && (task.handles > 0 || task.waiters > 0) {
                let base = lua_gettop(co) - results
                let stack = LuaStack(co)
                if stack.ensure(3) {
                    lua_createtable(co, results, 1)
                    for i in 0..<results {
                        lua_pushvalue(co, base + 1 + i)
                        lua_rawseti(co, -2, lua_Integer(i + 1))
                    }
                    lua_pushinteger(co, lua_Integer(results))
                    stack.setField("n", in: -2)
                    task.outcomeRef = luaL_ref(co, SHIM_REGISTRYINDEX)
                }
            }
            lua_settop(co, 0)
            finish(task, .done)
        default:
            fail(task)
        }
    }

    /// The task's coroutine died with the error object on its top.
    private func fail(_ task: LuaTask) {
        let co: OpaquePointer = task.thread
        shim_errortext(L, co)
        let raw = LuaStack(L).string(at: -1) ?? "(no message)"
        shim_pop(L, 1)
        let text = methodHint(in: co, text: raw)
        if task.keepsOutcome && (task.handles > 0 || task.waiters > 0) {
            lua_pushvalue(co, -1)
            task.outcomeRef = luaL_ref(co, SHIM_REGISTRYINDEX)
        }
        task.errorText = text
        if budget.pointee.tripped == Int32(SHIM_TRIP_INTERRUPT) { interrupted = true }
        let closeStatus = shim_closethread(co, L)  // runs pending to-be-closed variables
        if closeStatus != LUA_OK && closeStatus != LUA_YIELD {
            let message = LuaStack(co).string(at: -1)
            if let message, !text.contains(message) { options.warnings("while closing variables of \(task.label): \(message)") }
        }
        finish(task, .failed)
    }

    func finish(_ task: LuaTask, _ status: LuaTask.Status) {
        if let wait = task.wait {
            waits[wait.id] = nil
            releaseClock(of: wait)
            wait.cancel?()
            task.wait = nil
            releaseRequestSlot(of: wait)
        }
        task.status = status
        tasks[task.id] = nil
        if let call = task.pending {  // ended before it ever ran: it has no thread
            task.pending = nil
            release(call.function)
        } else if status != .done || !recycleThread(of: task) {
            luaL_unref(L, SHIM_REGISTRYINDEX, task.threadRef)
        }
        if status == .failed, task.reportsErrors, task.waiters == 0, let text = task.errorText, !isExitUnwind(text) {
            if interrupted { options.errors(scriptError(task: task, text: text)); return finishCallbacks(task) }
            report(task: task, errorText: text)
        } else if status == .done, task.reportsErrors, !task.isErrorHook, let succeeded = options.succeeded {
            succeeded(reportLabel(of: task))
        }
        finishCallbacks(task)
    }

    private func finishCallbacks(_ task: LuaTask) {
        let callbacks = task.onEnd
        task.onEnd = []
        for callback in callbacks { callback(task) }
    }

    /// Cancels a task: its wait is cancelled, its to-be-closed variables run, and it ends as
    /// `cancelled`. A task cannot cancel itself while it runs.
    public func cancel(_ task: LuaTask) {
        guard !task.isFinished, task !== current else { return }
        withMemoryOverdraft {
            if let wait = task.wait {
                waits[wait.id] = nil
                releaseClock(of: wait)
                wait.cancel?()
                task.wait = nil
                releaseRequestSlot(of: wait)
            }
            if let thread = task.thread {
                let status = shim_closethread(thread, L)
                if status != LUA_OK, let message = LuaStack(thread).string(at: -1) {
                    options.warnings("while closing variables of \(task.label): \(message)")
                }
            }
            finish(task, .cancelled)
        }
    }

    /// Cancels every task and stops every timer: the script is stopping.
    public func cancelAll() {
        for timer in Array(timerObjects.values) { timer.stop(engine: self) }
        for id in Array(hostTimers.keys) { cancel(hostTimer: id) }
        requestGate.paused = true  // a cancelled request frees a slot for nothing queued to start
        for task in liveTasks where task !== current { cancel(task) }
        requestGate.paused = false
        for object in Array(liveObjects.values) { object.luaClose(engine: self) }
        liveObjects = [:]
        checkIdle()
    }

    // MARK: Waits

    /// Parks the running task on a wait. `start` runs once the task has yielded all the way to the
    /// scheduler and returns how to cancel the work; `deliver` pushes the results.
    func beginWait(
        in call: LuaCall, what: String, hostWork: Bool = false, event: Bool = false, counted: Bool = false, sleeps: Bool = false,
        deliver: @escaping (LuaEngine, LuaStack, Result<any Sendable, any Error>) -> Int32,
        start: @escaping (LuaEngine, UInt64) -> (() -> Void)
    ) throws(LuaRaise) -> LuaReturn {
        guard lua_isyieldable(call.L) != 0 else {
            throw LuaRaise(
                "\(call.name) cannot wait here: it was called from code that cannot yield "
                    + "(a table.sort comparator, a string.gsub callback, __tostring, __gc, or the top level of a "
                    + "required file); call it from the script body, a function, or task.spawn(fn)")
        }
        guard let task = current else { throw LuaRaise("\(call.name) must be called from a task") }
        guard task.wait == nil else { throw LuaRaise("internal error: \(call.name) waits twice") }
        let wait = PendingWait(id: nextWaitID, what: what, task: task, start: start, deliver: deliver)
        nextWaitID += 1
        wait.hostWork = hostWork
        wait.event = event
        wait.sleeps = sleeps
        wait.counted = counted
        waits[wait.id] = wait
        task.wait = wait
        return .await
    }

    /// Drops the running task's wait before it started (a relay through a coroutine that could not
    /// yield; see the prelude's `coroutine.resume`).
    func dropUnstartedWait() {
        guard let task = current, let wait = task.wait, !wait.started else { return }
        waits[wait.id] = nil
        task.wait = nil
    }

    /// Ends a wait: pushes its results onto the task and resumes it.
    func complete(wait id: UInt64, result: Result<any Sendable, any Error>) {
        guard !closed, let wait = waits.removeValue(forKey: id) else { return }
        releaseClock(of: wait)
        releaseRequestSlot(of: wait)
        let task = wait.task
        guard task.wait === wait, task.status == .waiting else { return }
        task.wait = nil
        withMemoryOverdraft {
            let stack = LuaStack(task.thread)
            // The binding's C frame reserved LUA_MINSTACK slots and yielded with none in use, so
            // this succeeds; results that need more ask for it themselves.
            if stack.ensure(20) {
                task.resumeArgs = wait.deliver(self, stack, result)
            } else {
                task.resumeArgs = 0
            }
        }
        task.status = .ready
        ready.append(task)
        drain()
    }

    // MARK: Clock

    /// Lets virtual time move again once a wait on host work is over.
    private func releaseClock(of wait: PendingWait) {
        guard wait.holdsClock else { return }
        wait.holdsClock = false
        executor.release()
    }

    /// Arms an executor timer `seconds` from now; `fire(timers:)` receives `id`.
    func armTimer(id: UInt64, after seconds: Double) {
        executor.schedule(timer: id, at: Quantities.deadline(executor.now, after: Quantities.nanoseconds(seconds)))
    }

    /// Disarms an executor timer.
    func cancelTimer(id: UInt64) { executor.cancel(timer: id) }

    /// A new identifier for an executor timer or a wait.
    func newTimerID() -> UInt64 {
        defer { nextWaitID += 1 }
        return nextWaitID
    }

    /// Executor timers that came due.
    func fire(timers ids: [UInt64]) {
        for id in ids {
            if id == LuaEngine.runDeadlineTimer {
                runDeadlinePassed()
            } else if waits[id] != nil {
                complete(wait: id, result: .success(TimerFired()))
            } else if let timer = timerObjects[id] {
                timer.fire(engine: self)
            } else if let body = hostTimers.removeValue(forKey: id) {
                body(self)
            }
        }
        drain()
    }

    /// Timer id of the run's wall-clock limit.
    static let runDeadlineTimer = UInt64.max

    /// Arms the wall-clock limit, so that a script that only waits is stopped too (computing code
    /// is stopped by the count hook).
    func armRunDeadline() {
        guard budget.pointee.run_deadline != 0 else { return }
        executor.schedule(realTimer: LuaEngine.runDeadlineTimer, at: budget.pointee.run_deadline)
    }

    private func runDeadlinePassed() {
        guard !isIdle else { return }
        errorCount += 1
        options.errors(LuaScriptError(
            script: options.name, task: "run",
            message: "time limit exceeded (see --time-limit): stopped after \(Quantities.formatDuration(options.timeLimit))",
            traceback: ""))
        cancelAll()
    }

    // MARK: Idle

    /// Whether nothing is left to run: no task and no timer.
    public var isIdle: Bool { tasks.isEmpty && timerObjects.isEmpty && hostTimers.isEmpty }

    /// Whether nothing is in progress but waits for outside events: no timers, and every task is
    /// parked on an event wait (a Signal K handler waiting for its next message). A drain has
    /// nothing to wait for then: such tasks can be cancelled at once.
    public var onlyAwaitsEvents: Bool {
        timerObjects.isEmpty && hostTimers.isEmpty && tasks.values.allSatisfy { $0.wait?.event == true }
    }

    /// Whether the state only waits for its clock: something is left to run (a timer, a
    /// schedule, a task), nothing runs now or is ready to, and every task sleeps (`sleep`): none
    /// waits for the network, the database or an event. `serve` shows such a script as sleeping.
    /// Asked on the executor, so no Lua code runs meanwhile.
    public var isSleeping: Bool {
        !isIdle && !closed && tasks.values.allSatisfy { $0.status == .waiting && $0.wait?.sleeps == true }
    }

    func checkIdle() {
        guard isIdle, !idleWaiters.isEmpty else { return }
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

/// The result of a wait that ended because its timer fired.
struct TimerFired: Sendable {}
