import CLua

/// A light thread of a script: the main chunk, a REPL line, a timer callback, a spawned function
/// or an event handler. Each runs in its own Lua coroutine, anchored in the registry.
public final class LuaTask {
    /// Where a task is in its life.
    public enum Status: String, Sendable {
        case ready, running, waiting, done, failed, cancelled
    }

    /// A number unique within the engine.
    public let id: Int
    /// What the task is, for people: `main chunk`, `timer created at alerts.lua:12`.
    public let label: String
    /// The task that created this one, for tracebacks.
    public let parentLabel: String?
    /// The coroutine; nil until a task started with a pending call (``PendingCall``) first runs.
    var thread: OpaquePointer!
    /// Registry reference that keeps the coroutine alive (`LUA_NOREF` while `thread` is nil).
    var threadRef: Int32
    /// The call a task spawned by `spawnCall(…, reusesThreads: true)` makes when it first runs: its
    /// thread is taken then, from the engine's pool of threads whose calls returned.
    var pending: PendingCall?
    /// Whether the task's thread may go back to the pool when its call returns without waiting.
    var reusesThread = false
    /// Whether the task ever yielded (a wait, or a yield to other tasks).
    var yieldedOnce = false
    /// Whether the script got hold of the task's thread (`coroutine.running()`).
    var threadEscaped = false
    /// Current status.
    public internal(set) var status: Status = .ready
    /// The wait the task is parked on, once the await token reached the scheduler.
    var wait: PendingWait?
    /// Registry reference of a table holding the results (done) or the error object (failed).
    var outcomeRef: Int32 = LUA_NOREF
    /// The error text with traceback, when failed.
    public internal(set) var errorText: String?
    /// Called once when the task ends (done, failed or cancelled).
    var onEnd: [(LuaTask) -> Void] = []
    /// Whether an error of this task is reported by the engine (false when someone waits for it).
    var reportsErrors = true
    /// What the task is waiting for, for `.tasks`.
    public var waitingFor: String? { wait?.what }
    /// Values pushed on the thread for the next resume.
    var resumeArgs: Int32 = 0
    /// The task runs the `on_error` hook (its own errors are not passed to the hook again).
    var isErrorHook = false
    /// Tasks waiting for this one (its error goes to them instead of being reported).
    var waiters = 0
    /// Live `task.Task` userdata for this task (results are kept while there are any).
    var handles = 0
    /// Keep results or error for `task.wait` (tasks made by `task.spawn`).
    var keepsOutcome = false

    init(id: Int, label: String, parentLabel: String?, thread: OpaquePointer?, threadRef: Int32) {
        self.id = id
        self.label = label
        self.parentLabel = parentLabel
        self.thread = thread
        self.threadRef = threadRef
    }

    /// Whether the task has ended.
    public var isFinished: Bool { status == .done || status == .failed || status == .cancelled }
}

/// A function shared by the tasks of one `spawnCall` batch until each has started: one registry
/// reference, released when the last of them took it (or ended without starting).
final class PendingFunction {
    let ref: Int32
    var users = 0

    init(ref: Int32) { self.ref = ref }
}

/// What a task that has no thread yet calls when it starts.
struct PendingCall {
    let function: PendingFunction
    /// Pushes the arguments on the task's stack; returns how many, or nil when they do not fit.
    let push: (LuaStack) -> Int32?
}

/// A wait a task is parked on: Swift async work, a timer, another task.
final class PendingWait {
    let id: UInt64
    let what: String
    unowned let task: LuaTask
    /// Starts the work once the task is parked; returns how to cancel it.
    let start: (LuaEngine, UInt64) -> (() -> Void)
    /// Pushes the results onto the task's thread; returns how many.
    let deliver: (LuaEngine, LuaStack, Result<any Sendable, any Error>) -> Int32
    var cancel: (() -> Void)?
    var started = false
    /// Swift work that posts the result later (virtual time must not jump while it runs).
    var hostWork = false
    /// Whether the wait holds the executor's virtual clock.
    var holdsClock = false
    /// A wait for something from outside that may never come (a stream's next message): a task
    /// parked on it has nothing in progress (see `LuaEngine.onlyAwaitsEvents`).
    var event = false
    /// A wait for the state's own clock only (`sleep`): a task parked on it is asleep (see
    /// `LuaEngine.isSleeping`).
    var sleeps = false
    /// A request (``LuaCall/request(_:_:deliver:)``): it runs under the state's
    /// ``LuaRequestGate``.
    var counted = false
    /// Where a counted wait stands in the gate.
    var slot = RequestSlot.none

    init(
        id: UInt64, what: String, task: LuaTask,
        start: @escaping (LuaEngine, UInt64) -> (() -> Void),
        deliver: @escaping (LuaEngine, LuaStack, Result<any Sendable, any Error>) -> Int32
    ) {
        self.id = id
        self.what = what
        self.task = task
        self.start = start
        self.deliver = deliver
    }
}
