// Fuzz/json.c — libFuzzer harness for Sources/LuaShim/json.c: decode and the encode round trip.
//
// Input: one option byte, then the JSON text.
//   bit 0: decode with {luanil = true}
//   bits 1-2: max_depth for decode and encode: default, 1, 3 or 64
//   bit 3: encode with indent = "  " (pretty) as well
// Checks, for every input:
//   - json.safe.decode never raises; it fails exactly when json.decode raises, with the same
//     message, which starts with "json.decode: ", and an offset within the text (+1);
//   - when the text decodes (and luanil is off): encode(v, {sort_keys}) either succeeds or fails
//     only for NaN/inf (1e400 decodes to inf); its output decodes to a value deep-equal to v
//     (integers stay integers, floats keep every bit), and encoding that again gives the same
//     bytes; the pretty encoding decodes to the same value too.
#include "lua_fuzz.h"
#include "shim_json.h"

static lua_State *L;

/// pcall of json.<fn>(arg at idx, opts at oidx or none); leaves results on the stack.
static int call_json(const char *field, int safe, int idx, int oidx, int nresults) {
    lua_getglobal(L, "json");
    if (safe) lua_getfield(L, -1, "safe"), lua_remove(L, -2);
    lua_getfield(L, -1, field);
    lua_remove(L, -2);
    lua_pushvalue(L, idx);
    if (oidx) lua_pushvalue(L, oidx);
    return lua_pcall(L, oidx ? 2 : 1, nresults, 0);
}

static void setup(void) {
    L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "json", luaopen_lookout_json, 1);
    lua_settop(L, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const int depths[4] = {0, 1, 3, 64};
    if (size < 1) return 0;
    if (!L) setup();
    int luanil = data[0] & 1, depth = depths[(data[0] >> 1) & 3], pretty = data[0] & 8;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    lua_pushlstring(L, text, len); // 1: text
    lua_createtable(L, 0, 2);      // 2: decode options
    if (luanil) lua_pushboolean(L, 1), lua_setfield(L, 2, "luanil");
    if (depth) lua_pushinteger(L, depth), lua_setfield(L, 2, "max_depth");
    lua_createtable(L, 0, 3); // 3: encode options
    lua_pushboolean(L, 1), lua_setfield(L, 3, "sort_keys");
    if (depth) lua_pushinteger(L, depth), lua_setfield(L, 3, "max_depth");

    // safe.decode: never raises; returns v or nil, err.
    int status = call_json("decode", 1, 1, 2, 2); // 4, 5
    fuzz_check(status == LUA_OK, "json.safe.decode raised: %s", lua_tostring(L, -1));
    int ok = !(lua_isnil(L, 4) && lua_istable(L, 5));
    // decode: raises exactly when safe.decode fails.
    status = call_json("decode", 0, 1, 2, 1); // 6
    fuzz_check((status == LUA_OK) == ok, "decode and safe.decode disagree (%d)", status);
    if (!ok) {
        lua_getfield(L, 5, "message"); // 7
        lua_getfield(L, 5, "offset");  // 8
        const char *msg = lua_tostring(L, 7);
        fuzz_check(msg && strncmp(msg, "json.decode: ", 13) == 0, "bad message %s", msg);
        fuzz_check(lua_rawequal(L, 6, 7), "messages differ: %s / %s", msg, lua_tostring(L, 6));
        lua_Integer off = lua_tointeger(L, 8);
        fuzz_check(off >= 1 && (size_t)off <= len + 1, "offset %lld of %zu", (long long)off, len);
        fuzz_done(&L);
        return 0;
    }
    fuzz_check(fuzz_same(L, 4, 6, 0), "decode and safe.decode results differ");
    if (luanil) { // nil holes make arrays' lengths arbitrary: nothing more to compare
        fuzz_done(&L);
        return 0;
    }

    // Round trip: e1 = encode(v); v2 = decode(e1) == v; encode(v2) == e1.
    status = call_json("encode", 0, 4, 3, 1); // 7: e1
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fuzz_check(msg && strstr(msg, "cannot encode NaN/inf"), "encode failed: %s", msg);
        fuzz_done(&L);
        return 0;
    }
    status = call_json("decode", 0, 7, 2, 1); // 8: v2
    if (status != LUA_OK) fuzz_show("encoded", lua_tostring(L, 7), lua_rawlen(L, 7));
    fuzz_check(status == LUA_OK, "decode(encode(v)) failed: %s", lua_tostring(L, -1));
    if (!fuzz_same(L, 4, 8, 0)) fuzz_show("encoded", lua_tostring(L, 7), lua_rawlen(L, 7));
    fuzz_check(fuzz_same(L, 4, 8, 0), "decode(encode(v)) differs from v");
    status = call_json("encode", 0, 8, 3, 1); // 9: e2
    fuzz_check(status == LUA_OK && lua_rawequal(L, 7, 9), "encode(decode(e1)) ~= e1: %s",
               lua_tostring(L, 9));
    if (pretty) {
        lua_pushliteral(L, "  ");
        lua_setfield(L, 3, "indent");
        status = call_json("encode", 0, 4, 3, 1); // 10
        fuzz_check(status == LUA_OK, "pretty encode failed: %s", lua_tostring(L, -1));
        status = call_json("decode", 0, 10, 2, 1); // 11
        fuzz_check(status == LUA_OK && fuzz_same(L, 4, 11, 0), "pretty round trip differs");
    }
    fuzz_done(&L);
    return 0;
}
