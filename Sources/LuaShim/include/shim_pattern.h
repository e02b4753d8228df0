// LuaShim: Lua 5.4 pattern matching under the script's time budget.
//
// Lua's own string.find/match/gmatch/gsub run their matcher in C, where the count hook that
// enforces --cpu-limit, --time-limit and interrupts never fires, and a pattern such as
// '.-.-.-.-b$' backtracks exponentially. pattern.c reimplements Lua 5.4.4's patterns with the
// same results and error messages; its matcher counts steps and periodically checks the
// state's ShimBudget, raising the hook's messages ("CPU limit exceeded: …", "time limit
// exceeded (see --time-limit)", "interrupted!") from inside a long match.
#ifndef LOOKOUT_LUA_SHIM_PATTERN_H
#define LOOKOUT_LUA_SHIM_PATTERN_H

#include <lua.h>

/// Replaces string.find, string.match, string.gmatch and string.gsub in the string library table
/// (and so in the string metatable's __index) with budget-checked versions. Call after luaL_openlibs.
/// The state's allocator user data must be its ShimBudget (as shim_newstate sets up). Never raises:
/// the table is updated in protected mode, and nothing changes if the global `string` is not a table.
void shim_guard_patterns(lua_State *L);

#endif
