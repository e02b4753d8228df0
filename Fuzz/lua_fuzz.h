// Fuzz/lua_fuzz.h — helpers shared by the C harnesses (json, json_cjson, pattern).
//
// A harness keeps one Lua state for the whole run, checks every property it claims with
// fuzz_check(), and calls fuzz_done() at the end of each input.
#ifndef LOOKOUT_LUA_FUZZ_H
#define LOOKOUT_LUA_FUZZ_H

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Stops the run with a message: libFuzzer records the input as a crash.
#define fuzz_check(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "\nFUZZ CHECK FAILED (%s:%d): %s\n  ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/// Bit pattern of a double (tells -0.0 from 0.0).
static inline uint64_t fuzz_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/// Deep equality of the values at absolute indices a and b: same types, integers equal, floats
/// equal bit for bit, strings byte-equal, light userdata equal, tables with the same keys (by
/// raw equality) and deep-equal values. Metatables are not compared. No metamethods run.
/// With int_as_float, an integer in a equals a float in b that it converts to exactly (b comes
/// from a decoder that only makes floats).
static int fuzz_same_numbers(lua_State *L, int a, int b, int depth, int int_as_float) {
    int ta = lua_type(L, a), tb = lua_type(L, b);
    if (ta != tb || depth > 6000) return 0;
    switch (ta) {
    case LUA_TNIL: return 1;
    case LUA_TBOOLEAN: return lua_toboolean(L, a) == lua_toboolean(L, b);
    case LUA_TNUMBER:
        if (int_as_float && lua_isinteger(L, a) && !lua_isinteger(L, b))
            return (double)lua_tointeger(L, a) == lua_tonumber(L, b);
        if (lua_isinteger(L, a) != lua_isinteger(L, b)) return 0;
        if (lua_isinteger(L, a)) return lua_tointeger(L, a) == lua_tointeger(L, b);
        return fuzz_bits(lua_tonumber(L, a)) == fuzz_bits(lua_tonumber(L, b));
    case LUA_TSTRING: return lua_rawequal(L, a, b);
    case LUA_TLIGHTUSERDATA: return lua_touserdata(L, a) == lua_touserdata(L, b);
    case LUA_TTABLE: {
        if (!lua_checkstack(L, 6)) return 0;
        lua_Integer na = 0, nb = 0;
        lua_pushnil(L);
        while (lua_next(L, a)) {
            na++;
            lua_pushvalue(L, -2);
            lua_rawget(L, b);
            int same = fuzz_same_numbers(L, lua_gettop(L) - 1, lua_gettop(L), depth + 1, int_as_float);
            lua_pop(L, 2);
            if (!same) {
                lua_pop(L, 1);
                return 0;
            }
        }
        lua_pushnil(L);
        while (lua_next(L, b)) {
            nb++;
            lua_pop(L, 1);
        }
        return na == nb;
    }
    default: return lua_rawequal(L, a, b);
    }
}

/// fuzz_same_numbers with integers and floats always distinct.
static inline int fuzz_same(lua_State *L, int a, int b, int depth) {
    return fuzz_same_numbers(L, a, b, depth, 0);
}

/// Prints a short, escaped excerpt of an input (for check messages).
static inline void fuzz_show(const char *what, const char *s, size_t n) {
    fprintf(stderr, "%s (%zu bytes): \"", what, n);
    for (size_t i = 0; i < n && i < 400; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') fputc(c, stderr);
        else fprintf(stderr, "\\x%02x", c);
    }
    fprintf(stderr, n > 400 ? "\"...\n" : "\"\n");
}

/// Ends an input: empties the stack and now and then collects garbage. The state lives for the
/// whole run (a fresh state per input is 4x slower), so Fuzz/run turns libFuzzer's leak check
/// off for the C harnesses: the Lua heap grows and shrinks between inputs by design, and the
/// code under test allocates only through Lua's allocator.
static inline void fuzz_done(lua_State **L) {
    static unsigned runs;
    lua_settop(*L, 0);
    if (++runs % 4096 == 0) lua_gc(*L, LUA_GCCOLLECT);
}

#endif
