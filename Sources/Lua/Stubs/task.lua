---@meta task
--- Light threads: run functions concurrently, wait for them, cancel them.
---
--- Every script body, timer callback, REPL line and event handler already runs as a task. Calls
--- that wait (sleep, HTTP, Nightscout…) park only their own task; the others keep running.
---@class tasklib
local task = {}

--- Starts `fn(...)` as a new task and returns its handle at once.
--- Context: anywhere.
--- Notes: an error in a task nobody waits for is reported with its traceback and counted in the
--- exit status of `lookout run`.
---@param fn fun(...): ...
---@param ... any arguments for `fn`
---@return task.Task t
function task.spawn(fn, ...) end

--- Waits until task `t` ends. Returns `true, results...` when it returned, or `false, err` when
--- it failed, was cancelled, or the timeout passed (`err.code` is "failed", "cancelled" or
--- "timeout"; the task keeps running after a timeout).
--- Context: task only (waits).
---@param t task.Task
---@param timeout? number|string seconds or a duration such as "30s" (0s to 366d)
---@return boolean ok
---@return any ... results, or the error
function task.wait(t, timeout) end

--- Waits for every task in the list. Returns `true, results` where `results[i]` is the packed
--- results of task i, or `false, err` for the first task that failed (after all have ended).
--- Context: task only (waits).
---@param list task.Task[]
---@param timeout? number|string
---@return boolean ok
---@return table|table results or error
function task.all(list, timeout) end

--- The running task.
--- Context: anywhere.
---@return task.Task t
function task.current() end

--- Lets the other ready tasks run, then continues.
--- Context: task only (waits).
function task.yield() end

---@class task.Task
local Task = {}

--- Cancels the task: what it waits for is cancelled and its `<close>` variables run.
--- Context: anywhere (a task cannot cancel itself).
---@return boolean cancelled false if it had already ended
function Task:cancel() end

--- The task's status: "ready", "running", "waiting", "done", "failed" or "cancelled".
--- Context: anywhere.
---@return string status
function Task:status() end

--- Same as `task.wait(self, timeout)`.
--- Context: task only (waits).
---@param timeout? number|string
---@return boolean ok
---@return any ...
function Task:wait(timeout) end

return task
