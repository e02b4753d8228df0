// LuaShim: load, require, collectgarbage and print as Lookout gives them to scripts.
//
// Each is Lua 5.4.4's own function (lbaselib.c, loadlib.c), so that argument checks, error
// messages and positions stay stock's (a wrapper written in Lua would name itself in errors and
// put its own position in front of them). In the sandbox, load, require and collectgarbage differ
// in one point each; `--trusted` scripts keep stock's three (shim_install_baselib does nothing):
//  - load refuses binary chunks: Lua does not verify bytecode, and a crafted chunk can corrupt
//    memory (wesnoth CVE-2018-1999023). It returns `nil, message` as for any chunk the mode
//    refuses;
//  - require refuses module names containing "\0" (Lua hands searchers the name cut at the first
//    "\0", so `require "x\0anything"` would load x.lua);
//  - collectgarbage refuses the options that tune or stop the collector.
// print is stock's in both modes, writing its line through the host (the REPL prints it above the
// prompt, `serve` into its log) instead of to standard output.
#include "shim.h"

#include <string.h>

static const char BINARY_REFUSED[] = "attempt to load a binary chunk (Lookout loads text chunks only)";

// ---- load ---------------------------------------------------------------------------------------

enum { RESERVEDSLOT = 5 };

typedef struct Reader {
    int first;      ///< no piece read yet
    int allows_bin; ///< the mode allows binary chunks: Lua would load one, so check here
} Reader;

static const char *checked_reader(lua_State *L, void *ud, size_t *size) {
    Reader *r = ud;
    luaL_checkstack(L, 2, "too many nested functions");
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        *size = 0;
        return NULL;
    }
    if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
    lua_replace(L, RESERVEDSLOT);
    const char *piece = lua_tolstring(L, RESERVEDSLOT, size);
    if (r->first && *size > 0) {
        r->first = 0;
        if (r->allows_bin && piece[0] == LUA_SIGNATURE[0]) {
            lua_pushstring(L, BINARY_REFUSED);
            lua_error(L);
        }
    }
    return piece;
}

static int load_aux(lua_State *L, int status, int envidx) {
    if (status == LUA_OK) {
        if (envidx != 0) {
            lua_pushvalue(L, envidx);
            if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
        }
        return 1;
    }
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
}

static int lib_load(lua_State *L) {
    int status;
    size_t l;
    const char *s = lua_tolstring(L, 1, &l);
    const char *mode = luaL_optstring(L, 3, "bt");
    int env = (!lua_isnone(L, 4) ? 4 : 0);
    int allows_bin = strchr(mode, 'b') != NULL;
    if (s != NULL) {
        const char *chunkname = luaL_optstring(L, 2, s);
        if (allows_bin && l > 0 && s[0] == LUA_SIGNATURE[0]) {
            luaL_pushfail(L);
            lua_pushstring(L, BINARY_REFUSED);
            return 2;
        }
        status = luaL_loadbufferx(L, s, l, chunkname, mode);
    } else {
        const char *chunkname = luaL_optstring(L, 2, "=(load)");
        luaL_checktype(L, 1, LUA_TFUNCTION);
        lua_settop(L, RESERVEDSLOT);
        Reader r = {1, allows_bin};
        status = lua_load(L, checked_reader, &r, chunkname, mode);
    }
    return load_aux(L, status, env);
}

// ---- require (loadlib.c's ll_require and findloader; upvalue 1 = the package table) -------------

static void findloader(lua_State *L, const char *name) {
    luaL_Buffer msg;
    if (lua_getfield(L, lua_upvalueindex(1), "searchers") != LUA_TTABLE)
        luaL_error(L, "'package.searchers' must be a table");
    luaL_buffinit(L, &msg);
    for (int i = 1;; i++) {
        luaL_addstring(&msg, "\n\t");
        if (lua_rawgeti(L, 3, i) == LUA_TNIL) {
            lua_pop(L, 1);
            luaL_buffsub(&msg, 2);
            luaL_pushresult(&msg);
            luaL_error(L, "module '%s' not found:%s", name, lua_tostring(L, -1));
        }
        lua_pushstring(L, name);
        lua_call(L, 1, 2);
        if (lua_isfunction(L, -2)) return;
        if (lua_isstring(L, -2)) {
            lua_pop(L, 1);
            luaL_addvalue(&msg);
        } else {
            lua_pop(L, 2);
            luaL_buffsub(&msg, 2);
        }
    }
}

static int lib_require(lua_State *L) {
    size_t len;
    const char *name = luaL_checklstring(L, 1, &len);
    luaL_argcheck(L, strlen(name) == len, 1, "module names cannot contain '\\0'");
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, 2, name);
    if (lua_toboolean(L, -1)) return 1;
    lua_pop(L, 1);
    findloader(L, name);
    lua_rotate(L, -2, 1);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -3);
    lua_call(L, 2, 1);
    if (!lua_isnil(L, -1))
        lua_setfield(L, 2, name);
    else
        lua_pop(L, 1);
    if (lua_getfield(L, 2, name) == LUA_TNIL) {
        lua_pushboolean(L, 1);
        lua_copy(L, -1, -2);
        lua_setfield(L, 2, name);
    }
    lua_rotate(L, -2, 1);
    return 2;
}

// ---- collectgarbage (the sandbox's) ---------------------------------------------------------------

static int pushmode(lua_State *L, int oldmode) {
    if (oldmode == -1)
        luaL_pushfail(L);
    else
        lua_pushstring(L, (oldmode == LUA_GCINC) ? "incremental" : "generational");
    return 1;
}

#define checkvalres(res) \
    {                    \
        if (res == -1) break; \
    }

static int lib_collectgarbage(lua_State *L) {
    static const char *const opts[] = {"stop",      "restart",      "collect",     "count",       "step", "setpause",
                                       "setstepmul", "isrunning", "generational", "incremental", NULL};
    static const int optsnum[] = {LUA_GCSTOP,       LUA_GCRESTART,   LUA_GCCOLLECT, LUA_GCCOUNT, LUA_GCSTEP,
                                  LUA_GCSETPAUSE,   LUA_GCSETSTEPMUL, LUA_GCISRUNNING, LUA_GCGEN, LUA_GCINC};
    int o = optsnum[luaL_checkoption(L, 1, "collect", opts)];
    if (o != LUA_GCCOLLECT && o != LUA_GCCOUNT && o != LUA_GCSTEP && o != LUA_GCISRUNNING) {
        return luaL_argerror(L, 1, lua_pushfstring(L, "'%s' is not allowed in the sandbox (see --trusted)",
                                                   lua_tostring(L, 1)));
    }
    switch (o) {
    case LUA_GCCOUNT: {
        int k = lua_gc(L, o);
        int b = lua_gc(L, LUA_GCCOUNTB);
        checkvalres(k);
        lua_pushnumber(L, (lua_Number)k + ((lua_Number)b / 1024));
        return 1;
    }
    case LUA_GCSTEP: {
        int step = (int)luaL_optinteger(L, 2, 0);
        int res = lua_gc(L, o, step);
        checkvalres(res);
        lua_pushboolean(L, res);
        return 1;
    }
    case LUA_GCSETPAUSE:
    case LUA_GCSETSTEPMUL: {
        int p = (int)luaL_optinteger(L, 2, 0);
        int previous = lua_gc(L, o, p);
        checkvalres(previous);
        lua_pushinteger(L, previous);
        return 1;
    }
    case LUA_GCISRUNNING: {
        int res = lua_gc(L, o);
        checkvalres(res);
        lua_pushboolean(L, res);
        return 1;
    }
    case LUA_GCGEN: {
        int minormul = (int)luaL_optinteger(L, 2, 0);
        int majormul = (int)luaL_optinteger(L, 3, 0);
        return pushmode(L, lua_gc(L, o, minormul, majormul));
    }
    case LUA_GCINC: {
        int pause = (int)luaL_optinteger(L, 2, 0);
        int stepmul = (int)luaL_optinteger(L, 3, 0);
        int stepsize = (int)luaL_optinteger(L, 4, 0);
        return pushmode(L, lua_gc(L, o, pause, stepmul, stepsize));
    }
    default: {
        int res = lua_gc(L, o);
        checkvalres(res);
        lua_pushinteger(L, res);
        return 1;
    }
    }
    luaL_pushfail(L); // invalid call (inside a finalizer)
    return 1;
}

// ---- Installation -------------------------------------------------------------------------------

void shim_install_baselib(lua_State *L, int trusted) {
    if (trusted) return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushcfunction(L, lib_load);
    lua_setfield(L, -2, "load");
    lua_pushcfunction(L, lib_collectgarbage);
    lua_setfield(L, -2, "collectgarbage");
    if (lua_getfield(L, -1, "package") == LUA_TTABLE) {
        lua_pushcclosure(L, lib_require, 1);
        lua_setfield(L, -2, "require");
    } else {
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

// ---- print --------------------------------------------------------------------------------------

static const char *const PRINT_WRITE = "lookout.print.write";

/// lbaselib.c's luaB_print: the arguments through luaL_tolstring, separated by tabs, as one line
/// handed to the host's write function (registry PRINT_WRITE), which ends it.
static int lib_print(lua_State *L) {
    int n = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, PRINT_WRITE);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_call(L, 1, 0);
    return 0;
}

int shim_open_print(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, PRINT_WRITE);
    lua_pushcfunction(L, lib_print);
    lua_setglobal(L, "print");
    return 0;
}
