---@meta health
--- What the `lookout serve` running beside the script reports of its scripts, read-only: the
--- document of `GET /status` (`lookout status`), as serve writes it into the state folder every
--- 2 seconds. Scripts cannot reach the status server itself: it acknowledges alerts.
---@class healthlib
local health = {}

--- The status document: `entries` (one per script, stream and outbox: `name`, `kind`, `state`,
--- `last_error`, `last_error_at`, `errors`, `restarts`, …) and `info`; or `nil, err`
--- (`err.code == "not_running"`) when no serve has written it within the last 10 s.
--- Context: anywhere.
---
--- ```lua
--- local status, err = require("health").serve()
--- if status then for _, e in ipairs(status.entries) do print(e.name, e.state) end end
--- ```
---@return table|nil status
---@return table|nil err
function health.serve() end

return health
