---@meta log
--- Write to Lookout's log, with levels and the script's name as prefix.
---
--- Messages go to standard error (and the service log under `lookout serve`). Arguments are
--- joined with spaces after `tostring`, like `print`. The level shown is set by `[log] level` in
--- the config or `--verbose`.
---
--- `log` and `print` share one budget per script: a line longer than `[limits] log_line` (4 KiB)
--- is cut, ending in `…(+N bytes)`; past a burst of `[limits] log_burst` lines (500), lines pass at
--- `[limits] log_rate` a second (10) and the rest are dropped, counted in a
--- `… suppressed N lines` line written before the next one that passes.
---@class loglib
local log = {}

--- Logs at level "trace".
--- Context: anywhere.
---@param ... any
function log.trace(...) end

--- Logs at level "debug".
--- Context: anywhere.
---@param ... any
function log.debug(...) end

--- Logs at level "info".
--- Context: anywhere.
---@param ... any
function log.info(...) end

--- Logs at level "notice".
--- Context: anywhere.
---@param ... any
function log.notice(...) end

--- Logs at level "warning".
--- Context: anywhere.
---@param ... any
function log.warn(...) end

--- Logs at level "error".
--- Context: anywhere.
---@param ... any
function log.error(...) end

--- The lowest level that is shown: "trace", "debug", "info", "notice", "warning", "error" or "critical".
--- Context: anywhere.
---@return string level
function log.level() end

return log
