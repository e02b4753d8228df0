---@meta script
--- The running script: its name, arguments, error hook and exit.
---@class scriptlib
---@field name string the script's name, e.g. "alerts.lua"
---@field args string[] the arguments after the script name (also the global `arg`)
local script = {}

--- Sets a function called (as a new task) with every error no one caught: in the main chunk,
--- timers, spawned tasks and handlers. The error is still reported and counted.
--- Context: anywhere.
---@param fn fun(err: {message: string, traceback: string, task: string, script: string})|nil nil removes the hook
function script.on_error(fn) end

--- Ends the script: every task is cancelled (their `<close>` variables run) and `lookout run`
--- exits with `code`.
--- Context: anywhere.
---@param code? integer exit status, default 0
function script.exit(code) end

--- Waits `duration` without blocking other tasks (also the global `sleep`).
--- Context: task only (waits).
---@param duration number|string seconds, or a duration such as "250ms", "5s" (0s to 366d)
function script.sleep(duration) end

--- Seconds since the script started (monotonic clock; virtual time under `lookout test`).
--- Context: anywhere.
---@return number seconds
function script.uptime() end

--- Memory the script's Lua state uses, in bytes, and its limit (0 = none).
--- Context: anywhere.
---@return integer used
---@return integer limit
function script.memory() end

return script
