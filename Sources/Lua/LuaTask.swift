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
    /// The coroutine.
    let thread: OpaquePointer
    /// Registry reference that keeps the coroutine alive.
    let threadRef: Int32
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

    init(id: Int, label: String, parentLabel: String?, thread: OpaquePointer, threadRef: Int32) {
        self.id = id
        self.label = label
        self.parentLabel = parentLabel
        self.thread = thread
        self.threadRef = threadRef
    }

    /// Whether the task has ended.
    public var isFinished: Bool { status == .done || status == .failed || status == .cancelled }
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
