---@meta json
--- JSON encoding and decoding, compatible with lua-cjson (openresty flavour).
---
--- Integers stay exact (64-bit), floats round-trip exactly, and strings are bytes (invalid UTF-8
--- survives). Decoded arrays carry `json.array_mt` so they encode back as arrays, even empty.
--- A plain empty table encodes as `{}`; use `json.empty_array` or `setmetatable(t, json.array_mt)`
--- for `[]`. JSON `null` decodes to `json.null`, a value that is *truthy*: test `v == json.null`,
--- or decode with `{luanil = true}` to drop nulls.
---@class jsonlib
---@field null lightuserdata JSON null
---@field empty_array lightuserdata encodes as []
---@field array_mt table metatable marking a table as a JSON array: written up to its largest positive integer key (holes as null; too sparse, e.g. `{[2^31] = 1}`, raises); other keys are ignored
---@field safe jsonlib.safe versions that return nil, err instead of raising
local json = {}

--- Encodes a value as JSON text.
--- Context: anywhere.
--- Notes: raises on functions, NaN/inf, cycles and excessively sparse arrays, naming the path
--- (`json.encode: cycle at $.a.b`).
---@param value any
---@param opts? {indent?: string, sort_keys?: boolean, max_depth?: integer}
---@return string text
function json.encode(value, opts) end

--- Decodes JSON text.
--- Context: anywhere.
--- Notes: raises with the byte offset on bad input (`json.decode: unexpected character 'x' at byte 17`).
---@param text string
---@param opts? {luanil?: boolean, max_depth?: integer}
---@return any value
function json.decode(text, opts) end

---@class jsonlib.safe
local safe = {}

--- Like `json.encode`, but returns `nil, err` instead of raising.
--- Context: anywhere.
---@param value any
---@param opts? table
---@return string|nil text
---@return table|nil err
function safe.encode(value, opts) end

--- Like `json.decode`, but returns `nil, err` (with `err.offset`) instead of raising.
--- Context: anywhere.
---@param text string
---@param opts? table
---@return any value
---@return table|nil err
function safe.decode(text, opts) end

return json
