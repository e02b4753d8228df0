import CLua
import LuaShim

extension LuaEngine {
    /// Reports an error nobody caught: to the error sink, into the error count (the exit status of
    /// `run`) and to the script's `on_error` hook.
    func report(task: LuaTask, errorText: String) {
        errorCount += 1
        let error = scriptError(task: task, text: errorText)
        options.errors(error)
        guard errorHook != LUA_NOREF, !task.isErrorHook else { return }
        let hook = errorHook
        let handler = spawn(label: "on_error handler for \(task.label)") { stack in
            lua_rawgeti(stack.L, SHIM_REGISTRYINDEX, lua_Integer(hook))
            stack.push(.object([
                "message": .text(error.message), "traceback": .text(error.traceback), "task": .text(error.task),
                "script": .text(error.script),
            ]))
            return 1
        }
        handler.isErrorHook = true
    }

    /// Splits Lua's "message\nstack traceback:\n…" text, cuts host frames unless verbose, and adds
    /// hints for limits.
    func scriptError(task: LuaTask, text: String) -> LuaScriptError {
        var message = text
        var traceback = ""
        if let range = text.range(of: "\nstack traceback:") {
            message = String(text[..<range.lowerBound])
            traceback = String(text[range.lowerBound...].dropFirst())
        }
        // A script chooses its error messages: they are output lines like `print`'s, cut alike.
        message = outputLimiter.cut(message)
        if message.hasSuffix("not enough memory") {
            let limit = budget.pointee.limit
            message += " (memory limit \(limit >> 20) MiB reached; see --memory-limit)"
        }
        if !options.verbose {
            traceback = traceback.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { line in !line.contains("[C]: in ?") && !line.contains("[lookout]") }
                .joined(separator: "\n")
        }
        return LuaScriptError(script: options.name, task: reportLabel(of: task), message: message, traceback: traceback)
    }

    /// The task as errors and successes name it: `timer created at alerts.lua:12 (started by main chunk)`.
    func reportLabel(of task: LuaTask) -> String {
        var label = task.label
        if let parent = task.parentLabel, parent != task.label { label += " (started by \(parent))" }
        return label
    }
}
