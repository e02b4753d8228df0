---@meta store
--- A persistent key/value store for this script, kept between runs.
---
--- Each script has its own keys (by script name), in Lookout's state database
--- (`~/.local/state/lookout/lookout.sqlite3`). Values are anything `json.encode` accepts and
--- read back exactly as `json.decode(json.encode(value))` gives them: integers stay exact
--- (64-bit), floats round-trip, arrays stay arrays (even empty ones, via `json.array_mt`) and
--- `json.null` stays `json.null`. Keys are non-empty UTF-8 strings of at most 1024 bytes.
--- Calls wait for the database without blocking other tasks; if the database fails they return
--- `nil, err` with `err.code == "store"`. When the state database is full (`[state] max_size`,
--- or less free disk than `[state] min_free`) writes that keep something get `nil, err` with
--- `err.code` `"quota"` or `"disk_full"` (deleting still works): the room left is the guard's.
---@class storelib
local store = {}

--- Reads the value stored under a key.
--- Context: task only (waits).
--- Notes: returns `default` (or nil) when the key is absent.
---@param key string
---@param default? any returned when the key is absent
---@return any value
---@return table|nil err
function store.get(key, default) end

--- Stores a value under a key; nil deletes the key.
--- Context: task only (waits).
--- Notes: raises if the value cannot be encoded as JSON, naming where
--- (`value is not JSON-encodable: cannot encode function at $.handlers[2]`).
---@param key string
---@param value any
---@return true|nil ok
---@return table|nil err
function store.set(key, value) end

--- Deletes a key (nothing happens if it is absent).
--- Context: task only (waits).
---@param key string
---@return true|nil ok
---@return table|nil err
function store.delete(key) end

--- The keys of this script, sorted (byte order), optionally only those starting with a prefix.
--- Context: task only (waits).
---@param prefix? string
---@return string[]|nil keys
---@return table|nil err
function store.keys(prefix) end

--- Every key and value of this script, as one table.
--- Context: task only (waits).
---@return table<string, any>|nil values
---@return table|nil err
function store.all() end

--- Replaces a value with `fn(old)`, atomically with respect to other updates of the key.
--- Context: task only (waits).
--- Notes: `fn` gets the current value (nil if absent) and returns the new one (nil deletes);
--- it may wait (call other modules). Other tasks and runs of this script updating the same key
--- wait their turn. If the value changed meanwhile by other means (`store.set`, another
--- process), `fn` is called again with the newer value, so keep it free of side effects. An
--- error in `fn` propagates and leaves the value unchanged. Returns the new value.
--- ```lua
--- local n = store.update("runs", function(n) return (n or 0) + 1 end)
--- ```
---@param key string
---@param fn fun(old: any): any
---@return any new
---@return table|nil err
function store.update(key, fn) end

return store
