// Lookout's JSON codec for Lua (json.c): cjson-compatible surface, exact numbers, byte-exact
// strings, JSON paths in encode errors and byte offsets in decode errors.
#ifndef LOOKOUT_SHIM_JSON_H
#define LOOKOUT_SHIM_JSON_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

/// Registry key of the metatable that marks a table as a JSON array (`json.array_mt`). The Swift
/// side (LuaStack.arrayMetatableKey) uses the same key, so both agree on one table per state.
#define LOOKOUT_JSON_ARRAY_MT_KEY "lookout.array_mt"

/// Opens the `json` module and pushes its table (use as package.preload["json"]):
///
/// - `encode(value [, {indent = "  ", sort_keys = true, max_depth = 1000}])` → string.
///   Integers stay integers, floats use the shortest of %.15g/%.16g/%.17g that reads back
///   exactly (integral floats keep ".0"), strings are copied byte for byte (only `"`, `\` and
///   control characters are escaped). Raises "json.encode: <what> at <path>" (path like
///   `$.entries[3].sgv`) for NaN/inf, functions and other unencodable values, bad keys,
///   excessively sparse arrays, cycles and nesting deeper than max_depth.
/// - `decode(string [, {luanil = true, max_depth = 1000}])` → value. Strict RFC 8259 grammar;
///   integers that fit in int64 become Lua integers; every array gets `array_mt`. Raises
///   "json.decode: <what> at byte <offset>" (1-based).
/// - max_depth may be 1..5000 (C recursion bound); anything else is an argument error.
/// - `null` (NULL light userdata), `empty_array` (light userdata encoding as `[]`), `array_mt`.
/// - `safe.encode`, `safe.decode`: same, but return `nil, err` instead of raising, where err is
///   `{code = "json", message = ..., retryable = false [, offset = byte]}` with a __tostring.
int luaopen_lookout_json(lua_State *L);

#endif
