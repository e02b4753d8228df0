import CLua
import Foundation
import LuaShim

/// What one REPL input produced.
public enum ReplEvaluation: Sendable, Equatable {
    /// The input is an unfinished statement: read another line (prompt `>> `).
    case incomplete
    /// The line ran; the text shows its results (empty when there were none).
    case output(String)
    /// Syntax or runtime error, with traceback for runtime errors.
    case error(String)
}

/// The REPL engine: compiling input, running each line as a task, printing results, completion,
/// `help` and `.tasks`. The terminal side (line editing, history, signals) lives in the CLI.
extension LuaRuntime {
    /// Prepares the state for interactive use: `help`, `_repl` helpers, result variables.
    public func prepareREPL() throws {
        try engine.installREPLSupport()
    }

    /// Compiles and runs one input. Expressions are printed without `return` (and `=expr` works),
    /// statements run as they are; an unfinished statement asks for more input.
    public func evaluate(_ input: String) async -> ReplEvaluation {
        let engine = self.engine
        var text = input
        if text.hasPrefix("=") { text = "return " + text.dropFirst() }
        let lineNumber = engine.nextLineNumber()
        let chunkName = "=repl"
        let compiled = engine.compileREPL(Array(text.utf8), chunkName: chunkName, tryExpression: true)
        switch compiled {
        case .incomplete: return .incomplete
        case .syntaxError(let message): return .error(message)
        case .ready:
            break
        }
        return await runLine(label: "repl line \(lineNumber)")
    }

    /// Runs a script file in the REPL's state (`--load`, `.load`); its globals stay.
    public func evaluate(file path: String) async -> ReplEvaluation {
        guard let data = FileManager.default.contents(atPath: path).map({ Array($0) }) else { return .error(Self.cannotRead(path)) }
        switch engine.compileREPL(LuaRuntime.skippingShebang(data), chunkName: "@" + path, tryExpression: false) {
        case .incomplete: return .error("\(path): unexpected end of file")
        case .syntaxError(let message): return .error(message)
        case .ready: return await runLine(label: "loading \(path)")
        }
    }

    private func runLine(label: String) async -> ReplEvaluation {
        let engine = self.engine
        let task = engine.spawnREPLLine(label: label)
        engine.drain()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if task.isFinished { continuation.resume() } else { task.onEnd.append { _ in continuation.resume() } }
        }
        return engine.replOutcome(of: task)
    }

    /// The prompts: globals `_PROMPT` and `_PROMPT2` when they are strings (read raw), else
    /// `"> "` and `">> "`.
    public func prompts() -> (first: String, continuation: String) {
        let engine = self.engine
        return engine.withMemoryOverdraft {
            let s = LuaStack(engine.L)
            lua_rawgeti(engine.L, SHIM_REGISTRYINDEX, lua_Integer(LUA_RIDX_GLOBALS))
            defer { s.pop() }
            func text(_ name: String, _ fallback: String) -> String {
                s.rawField(name, of: -1)
                defer { s.pop() }
                return s.string(at: -1) ?? fallback
            }
            return (text("_PROMPT", "> "), text("_PROMPT2", ">> "))
        }
    }

    /// Cancels the line that is running (Ctrl-C); returns false when none was.
    @discardableResult
    public func cancelLine() -> Bool {
        budget.interrupt()
        defer { budget.clearInterrupt() }
        guard let task = engine.replLineTask, !task.isFinished else { return false }
        engine.cancel(task)
        return true
    }

    /// Stops a line that computes: the hook raises "interrupted!" in it (callable from any thread).
    public nonisolated func interruptLine() { budget.interrupt() }

    /// Completion candidates for the text before the cursor, and where the replaced word starts
    /// (1-based byte offset). Uses raw access only: never runs script code.
    public func complete(line: String, cursor: Int) -> (candidates: [String], start: Int) {
        engine.complete(line: line, cursor: cursor)
    }

    /// The `.tasks` listing: running tasks and timers with what they wait for.
    public func taskListing() -> String {
        let engine = self.engine
        var lines: [String] = []
        for task in engine.liveTasks where task !== engine.replLineTask {
            var line = "task \(task.id) \(task.status.rawValue): \(task.label)"
            if let waiting = task.waitingFor { line += " — waiting for \(waiting)" }
            lines.append(line)
        }
        for timer in engine.timerObjects.values.sorted(by: { $0.id < $1.id }) {
            lines.append(timer.luaDescription + (timer.skippedTicks > 0 ? " (\(timer.skippedTicks) ticks skipped)" : ""))
        }
        let memory = engine.memory
        lines.append("memory: \(memory.used >> 10) KiB used, peak \(memory.peak >> 10) KiB")
        return lines.joined(separator: "\n")
    }
}

enum REPLCompilation {
    case ready
    case incomplete
    case syntaxError(String)
}

extension LuaEngine {
    func nextLineNumber() -> Int {
        replLineCount += 1
        return replLineCount
    }

    /// Leaves the compiled function on the main stack when ready.
    func compileREPL(_ text: [UInt8], chunkName: String, tryExpression: Bool) -> REPLCompilation {
        withMemoryOverdraft {
            let s = LuaStack(L)
            var unfinishedExpression = false
            if tryExpression {
                if load(Array("return ".utf8) + text + [UInt8(ascii: ";")], chunkName: chunkName) == LUA_OK { return .ready }
                s.pop()
                // `1 +`: an expression that goes on on the next line (the `;` above hides its <eof>).
                if load(Array("return ".utf8) + text, chunkName: chunkName) == LUA_ERRSYNTAX {
                    unfinishedExpression = s.string(at: -1)?.hasSuffix("<eof>") ?? false
                }
                s.pop()
            }
            let status = load(text, chunkName: chunkName)
            if status == LUA_OK { return .ready }
            let message = s.string(at: -1) ?? "syntax error"
            s.pop()
            if status == LUA_ERRSYNTAX, message.hasSuffix("<eof>") || unfinishedExpression { return .incomplete }
            return .syntaxError(message)
        }
    }

    private func load(_ bytes: [UInt8], chunkName: String) -> Int32 {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { shim_loadtext(L, $0.baseAddress, $0.count, chunkName) }
        }
    }

    /// Starts the compiled function (on the main stack) through the REPL driver as a task.
    func spawnREPLLine(label: String) -> LuaTask {
        let task = spawn(label: label, reportErrors: false) { stack in
            lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(replDriverRef))
            shim_insert(L, -2)
            lua_xmove(L, stack.L, 2)  // the compiled line: driver(fn)
            return 1
        }
        task.keepsOutcome = true
        task.waiters += 1  // the REPL itself waits for it
        replLineTask = task
        return task
    }

    func replOutcome(of task: LuaTask) -> ReplEvaluation {
        defer {
            task.waiters -= 1
            task.releaseOutcomeIfUnused(engine: self)
            if replLineTask === task { replLineTask = nil }
        }
        switch task.status {
        case .done:
            guard task.outcomeRef != LUA_NOREF else { return .output("") }
            return withMemoryOverdraft {
                lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(task.outcomeRef))
                lua_rawgeti(L, -1, 1)
                defer { shim_pop(L, 2) }
                return .output(LuaStack(L).string(at: -1) ?? "")
            }
        case .cancelled:
            return .error("cancelled")
        default:
            let error = scriptError(task: task, text: task.errorText ?? "error")
            return .error(error.traceback.isEmpty ? error.message : "\(error.message)\n\(error.traceback)")
        }
    }

    func complete(line: String, cursor: Int) -> (candidates: [String], start: Int) {
        guard replCompleteRef != LUA_NOREF else { return ([], cursor) }
        return withMemoryOverdraft {
            let s = LuaStack(L)
            let top = s.top
            defer { s.top = top }
            lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(replCompleteRef))
            s.push(line)
            s.push(cursor)
            guard shim_pcall_traceback(L, 2, 2) == LUA_OK, lua_type(L, -2) == LUA_TTABLE else { return ([], cursor) }
            let start = s.integer(at: -1).map(Int.init) ?? cursor
            var candidates: [String] = []
            let n = lua_rawlen(L, -2)
            for i in 0..<n {
                lua_rawgeti(L, -2, lua_Integer(i + 1))
                if let c = s.string(at: -1) { candidates.append(c) }
                s.pop()
            }
            return (candidates, start)
        }
    }

    /// Loads the REPL helpers: the line driver, `help`, completion (with a raw metatable getter).
    func installREPLSupport() throws {
        try withMemoryOverdraft {
            let s = LuaStack(L)
            try s.load(PackageResources.repl_support_lua, name: "=[lookout] repl", what: "repl support")
            pushFunction("rawmetatable") { call in
                guard lua_getmetatable(call.L, call.index(1)) != 0 else { return .values(0) }
                return .values(1)
            }
            s.pushTable(fields: stubs.count)
            for (name, stub) in stubs {
                s.push(stub)
                s.setField(name, in: -2)
            }
            s.push(.array(moduleNames.sorted().map(LuaValue.text)))
            // typemethods(): each registered object type's methods table, by type name, for
            // help(home.entries) and help(home) (types are registered as modules are required).
            pushFunction("typemethods") { call in
                let names = call.engine.objectTypes.sorted()
                call.stack.pushTable(fields: names.count)
                for name in names {
                    guard call.stack.rawField(name, of: SHIM_REGISTRYINDEX) == .table else { call.stack.pop(); continue }
                    _ = call.stack.rawField("__index", of: -1)
                    call.stack.remove(at: -2)
                    call.stack.setField(name, in: -2)
                }
                return .values(1)
            }
            guard shim_pcall_traceback(L, 4, 2) == LUA_OK else {
                defer { s.pop() }
                throw LuaRaise("repl support: \(s.string(at: -1) ?? "?")")
            }
            replCompleteRef = luaL_ref(L, SHIM_REGISTRYINDEX)
            replDriverRef = luaL_ref(L, SHIM_REGISTRYINDEX)
        }
    }
}
