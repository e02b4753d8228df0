import CLua
import Foundation
import LuaShim

/// A Lua state with its own thread, running scripts as concurrent tasks.
///
/// All Lua work happens on the runtime's executor (one dedicated thread); Swift code talks to it
/// through this actor. Call `close()` when done: it cancels what is left and frees the state on
/// its own thread.
///
/// ```swift
/// let runtime = LuaRuntime(options: options, modules: HostModules.all(config))
/// try await runtime.start()
/// let outcome = await runtime.run(file: "alerts.lua")
/// await runtime.close()
/// ```
public actor LuaRuntime {
    /// The thread all Lua work runs on.
    public nonisolated let executor: LuaThreadExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The options of the state.
    public let options: LuaOptions
    private var modules: [any LuaModule]
    private var current: LuaEngine?
    private var generation: UInt64 = 0
    private var interrupted = false
    nonisolated let budget: BudgetBox

    /// Creates a runtime; `start()` makes the state.
    public init(options: LuaOptions, modules: [any LuaModule] = []) {
        self.options = options
        self.modules = modules
        self.executor = LuaThreadExecutor(name: "lua: \(options.name)", virtualTime: options.clock.virtual)
        self.budget = BudgetBox()
    }

    /// Makes the Lua state, installs the modules and starts the clock.
    public func start() throws {
        guard current == nil else { return }
        generation += 1
        let engine = try LuaEngine(runtime: self, executor: executor, options: options, generation: generation)
        budget.pointer = engine.budget
        for module in modules { try engine.register(module: module) }
        if options.conveniences { try engine.setSleepGlobal() }
        engine.setArguments(options.arguments)
        engine.armRunDeadline()
        current = engine
        executor.setTimerHandler { [weak self] ids in
            self?.assumeIsolated { runtime in runtime.current?.fire(timers: ids) }
        }
    }

    /// The engine; traps if `start()` was not called.
    public var engine: LuaEngine {
        guard let current else { preconditionFailure("LuaRuntime.start() was not called") }
        return current
    }

    /// Runs a body with the engine, on the executor.
    public func withEngine<T: Sendable>(_ body: (LuaEngine) throws -> T) rethrows -> T {
        try body(engine)
    }

    /// Runs `body` with the engine if the state of `generation` is still open (host work that
    /// finished after a `reset()` is dropped instead of touching the new state). Do not call it
    /// after `close()` returned: the executor's thread has ended and the call would never run.
    @discardableResult
    public func withLiveEngine<T: Sendable>(generation: UInt64, _ body: (LuaEngine) -> T) -> T? {
        guard let current, current.generation == generation, !current.closed else { return nil }
        return body(current)
    }

    /// Runs a script file as the main task and waits until it and everything it started (timers,
    /// tasks) has finished, or the script exits or is interrupted.
    public func run(file path: String) async -> LuaRunOutcome {
        guard let data = FileManager.default.contents(atPath: path) else {
            return LuaRunOutcome(errors: 1, exitCode: 2, interrupted: false, message: Self.cannotRead(path))
        }
        return await run(source: LuaRuntime.skippingShebang(Array(data)), chunkName: "@" + path)
    }

    /// Why a script file cannot be read: `cannot read x.lua: no such file`, `…: it is a folder`,
    /// `…: permission denied`.
    public static func cannotRead(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        let why: String
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            why = "no such file"
        } else if isDirectory.boolValue {
            why = "it is a folder, not a script"
        } else if !FileManager.default.isReadableFile(atPath: path) {
            why = "permission denied"
        } else {
            why = "reading failed"
        }
        return "cannot read \(path): \(why)"
    }

    /// A first line starting with `#` (`#!/usr/bin/env lookout run`) is skipped as `lua` does; its
    /// newline stays so line numbers do not change.
    static func skippingShebang(_ source: [UInt8]) -> [UInt8] {
        guard source.first == UInt8(ascii: "#") else { return source }
        return Array(source.drop(while: { $0 != UInt8(ascii: "\n") }))
    }

    /// Runs source text as the main task; see `run(file:)`.
    public func run(source: [UInt8], chunkName: String) async -> LuaRunOutcome {
        let engine = self.engine
        // The script's arguments also arrive as `...`, as with the `lua` interpreter.
        let arguments = options.arguments.dropFirst().map(LuaValue.text)
        if let message = engine.spawnChunk(source: source, chunkName: chunkName, label: "main chunk", arguments: arguments) {
            return LuaRunOutcome(errors: 1, exitCode: 1, interrupted: false, message: message)
        }
        engine.drain()
        await waitUntilIdle()
        let wasInterrupted = interrupted || engine.interrupted
        let exitCode: Int32 = wasInterrupted ? 130 : engine.exitCode ?? (engine.errorCount > 0 ? 1 : 0)
        return LuaRunOutcome(errors: engine.errorCount, exitCode: exitCode, interrupted: wasInterrupted, message: nil)
    }

    /// Waits until no task and no timer is left.
    public func waitUntilIdle() async {
        let engine = self.engine
        if engine.isIdle { return }
        await withCheckedContinuation { continuation in
            engine.idleWaiters.append(continuation)
        }
    }

    /// Stops the running Lua code from any thread (Ctrl-C, SIGTERM): code that computes is
    /// stopped by the hook with "interrupted!", then every task is cancelled.
    public nonisolated func interrupt() {
        budget.interrupt()
        Task { await self.cancelAfterInterrupt() }
    }

    private func cancelAfterInterrupt() {
        budget.clearInterrupt()
        interrupted = true
        current?.interrupted = true
        current?.cancelAll()
    }

    /// Cancels every task and timer.
    public func cancelAll() { current?.cancelAll() }

    /// Ends the state: cancels what is left, runs `<close>` variables and frees the state.
    public func close() {
        if let engine = current {
            engine.cancelAll()
            engine.closed = true
        }
        budget.pointer = nil
        current = nil  // lua_close runs here, on the executor
        executor.shutdown()
    }

    /// Makes a fresh state with the same options and modules (the REPL's `.reset`).
    /// With `modules`, the new state gets those instead (the REPL's `.reset` rereads config.toml).
    public func reset(modules newModules: [any LuaModule]? = nil) throws {
        if let newModules { modules = newModules }
        if let engine = current {
            engine.cancelAll()
            engine.closed = true
        }
        budget.pointer = nil
        current = nil
        try start()
    }

    func drainLater() {
        executor.release()  // the hold taken when the drain was deferred
        current?.drain()
    }

    /// Delivers the result of Swift work a task waits for.
    public func complete(wait id: UInt64, result: Result<any Sendable, any Error>) {
        current?.complete(wait: id, result: result)
    }
}

/// How a run ended.
public struct LuaRunOutcome: Sendable {
    /// Errors reported (uncaught errors in any task).
    public var errors: Int
    /// Exit status for the process: 0 ok, 1 script errors, 2 file not readable, 130 interrupted,
    /// or the code given to `script.exit`.
    public var exitCode: Int32
    /// Whether the run was interrupted.
    public var interrupted: Bool
    /// A message for errors outside tasks (unreadable file, syntax error).
    public var message: String?
}

/// The engine's budget, reachable from other threads for interrupts only.
final class BudgetBox: @unchecked Sendable {
    // @unchecked Sendable: `pointer` is written on the executor only; other threads only touch
    // the `interrupt` field through shim_interrupt, which is atomic.
    private let lock = NSLock()
    private var _pointer: UnsafeMutablePointer<ShimBudget>?

    var pointer: UnsafeMutablePointer<ShimBudget>? {
        get { lock.withLock { _pointer } }
        set { lock.withLock { _pointer = newValue } }
    }

    func interrupt() { lock.withLock { if let p = _pointer { shim_interrupt(p, 1) } } }
    /// Runs `body` with the pointer while no one can clear it (the state stays allocated meanwhile).
    func lockedPointer<T>(_ body: (UnsafeMutablePointer<ShimBudget>?) -> T) -> T { lock.withLock { body(_pointer) } }
    func clearInterrupt() { lock.withLock { if let p = _pointer { shim_interrupt(p, 0) } } }
}
