---@meta outbox
--- The upload queue: every upload a script makes (`upload_bg`, `upload_treatment`, `create`) is
--- stored here before it is sent, with an identifier made once, so a re-send after a crash or a
--- lost answer does not duplicate it on the server. Failures that may pass (network, 429, 5xx)
--- are retried with growing waits (2 s doubling to 10 min, ±20 %, at least `Retry-After`) while
--- a Lookout process that uses the site runs; failures retrying cannot fix (400, 401, 403, 422)
--- stay as "failed" until retried or dropped. `lookout outbox` shows the same from the shell.
--- Each script may keep `[limits] outbox_items` items (1000) and `outbox_bytes` bytes (16 MiB)
--- pending or failed: an upload past that is `nil, err` with `err.code == "quota"` (nothing queued
--- is dropped), and when the state database is full (`[state] max_size`, `min_free`) uploads get
--- `nil, err` too. A sent item keeps its fields below, not the document.
---@class outboxlib
local outbox = {}

---@class outbox.Item
---@field id string the item's id, which is also the document's `identifier`
---@field site string the site's URL
---@field collection string
---@field state "pending"|"sent"|"failed"
---@field attempts integer
---@field created integer epoch ms
---@field source string|nil the script that queued it
---@field error string|nil the last failure
---@field status integer|nil the HTTP status of the last failure
---@field next_attempt integer|nil epoch ms (pending items)
---@field sent_at integer|nil epoch ms
---@field deduplicated boolean|nil the server already had it

--- Items of the queue, oldest first.
--- Context: task only (waits).
---@param opts? {state?: "pending"|"failed"|"sent"|"all", limit?: integer} default: pending and failed, 100
---@return outbox.Item[]|nil items
---@return table|nil err
function outbox.list(opts) end

--- Makes an item pending again and sends it now when its site is open in this process.
--- Context: task only (waits).
---@param id string
---@return outbox.Item|nil item
---@return table|nil err `code == "not_found"` for an unknown id
function outbox.retry(id) end

--- Removes an item for good (it will not be sent).
--- Context: task only (waits).
---@param id string
---@return true|nil ok
---@return table|nil err
function outbox.drop(id) end

--- Sends every pending item of the sites open in this process now, ignoring retry waits.
--- Context: task only (waits).
---@return {sent: integer, retrying: integer, failed: integer}|nil report
---@return table|nil err
function outbox.flush() end
