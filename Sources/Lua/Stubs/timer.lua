---@meta timer
--- Run a function later, or every interval.
---
--- Timers are kept alive by the host until they fire for the last time, are stopped, or the
--- script ends: you never need to keep the handle in a variable. Each run of the callback is a
--- task of its own, so it may wait (HTTP, sleep, Nightscout…). A repeating timer never piles up
--- runs: a tick that comes while the previous run is still going is skipped. After 5 failed runs
--- in a row a repeating timer stops (with a warning) unless made with `{continue_on_error = true}`.
---@class timerlib
local timer = {}

--- Runs `fn(...)` once after `delay`.
--- Context: anywhere.
---@param delay number|string seconds, or a duration such as "90s", "5m", "1h" (0s to 366d; NaN, infinities and longer raise)
---@param fn fun(...) called as a new task
---@param ... any passed to `fn`
---@return timer.Handle handle
function timer.after(delay, fn, ...) end

--- Runs `fn(...)` every `interval`, first after one interval.
--- Context: anywhere.
--- Notes: `opts` may be given before `fn`: `timer.every("5m", {continue_on_error = true}, fn)`.
---@param interval number|string seconds (0.001 to 366 days), or a duration such as "90s", "5m"
---@param fn fun(...) called as a new task each time
---@param ... any passed to `fn`
---@return timer.Handle handle
function timer.every(interval, fn, ...) end

--- Parses a duration: `timer.seconds("1h30m")` is 5400.
--- Context: anywhere.
--- Notes: every duration a Lookout function takes is checked the same way: 0s to 366d, and NaN,
--- infinities, negative or longer values raise `bad argument … (duration must be between 0s and 366d, got …)`.
---@param duration number|string
---@return number seconds
function timer.seconds(duration) end

---@class timer.Handle
local Handle = {}

--- Stops the timer; a run already going finishes.
--- Context: anywhere.
---@return boolean stopped false if it had already stopped
function Handle:stop() end

--- Whether the timer will still fire.
--- Context: anywhere.
---@return boolean running
function Handle:running() end

return timer
