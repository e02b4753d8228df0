import Foundation

/// Timers for host modules (the `schedule` module): Swift work run on the executor at a
/// deadline, on the same clock as `timer.after` (so a virtual clock applies to them too).
/// While a host timer is armed the engine is not idle, so `run` keeps the script alive.
extension LuaEngine {
    /// Runs `body` on the executor `seconds` from now; returns an id for `cancel(hostTimer:)`.
    @discardableResult
    public func after(seconds: Double, _ body: @escaping (LuaEngine) -> Void) -> UInt64 {
        let id = newTimerID()
        hostTimers[id] = body
        armTimer(id: id, after: seconds)
        return id
    }

    /// Disarms a host timer (a no-op when it already fired).
    public func cancel(hostTimer id: UInt64) {
        guard hostTimers.removeValue(forKey: id) != nil else { return }
        cancelTimer(id: id)
        checkIdle()
    }

    /// Calls `callback` once when `task` ends (done, failed or cancelled); at once if it has.
    public func whenEnded(_ task: LuaTask, _ callback: @escaping (LuaTask) -> Void) {
        if task.isFinished {
            callback(task)
        } else {
            task.onEnd.append(callback)
        }
    }
}

extension LuaEngine {
    /// Stops every timer (`timer.after`/`every`) and host timer, so no new run starts; tasks
    /// already running go on (serve's drain on SIGTERM).
    public func stopTimers() {
        for timer in Array(timerObjects.values) { timer.stop(engine: self) }
        for id in Array(hostTimers.keys) { cancel(hostTimer: id) }
        checkIdle()
    }
}

extension LuaEngine {
    /// Under virtual time, keeps the clock from jumping while host work that will post Lua work
    /// runs outside `call.wait` (a schedule loading its last run, say); call the returned
    /// function, from any thread, once it is done. Free and a no-op on real time.
    public func holdTime() -> @Sendable () -> Void {
        guard executor.isVirtual else { return {} }
        executor.hold()
        let executor = self.executor
        let once = ReleaseOnce()
        return { if once.first() { executor.release() } }
    }
}

/// True the first time only, from any thread.
private final class ReleaseOnce: @unchecked Sendable {
    // @unchecked Sendable: `done` is only touched with `lock` held.
    private let lock = NSLock()
    private var done = false

    func first() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if done { return false }
        done = true
        return true
    }
}
