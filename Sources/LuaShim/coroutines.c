// LuaShim: the coroutine library as scripts see it.
//
// Every script body, timer callback and REPL line runs as a task: a Lua thread the scheduler
// resumes. Scripts must still see Lua as the manual describes it:
//  - the running task's thread is the main coroutine: coroutine.running() says so,
//    coroutine.isyieldable() is false there, and coroutine.yield raises "attempt to yield from
//    outside a coroutine" (the host's own waits yield from C, not through coroutine.yield);
//  - a host function that waits inside a coroutine the script made yields the await token to that
//    coroutine's resumer; coroutine.resume and the functions coroutine.wrap makes pass the token
//    on to the scheduler (parking the whole task) and the results back in (lua-host.md §8.4);
//  - errors, argument checks, <close> handling and the C-stack depth are lcorolib.c's (5.4.4): the
//    functions here are lcorolib.c's with the relay added, so they cost no more than stock's.
// resume and wrap also keep ShimBudget.current (the thread the limit watch arms) up to date.
#include "shim.h"

static const char CANNOT_WAIT[] =
    "cannot wait inside this coroutine: it was resumed from code that cannot yield (a table.sort "
    "comparator, a string.gsub callback, __tostring or the top level of a required file); start "
    "the work with task.spawn(fn) instead";

static lua_State *getco(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co, 1, "thread");
    return co;
}

/// Whether co is the thread of the task running now: the script's "main" coroutine.
static inline int is_task(lua_State *L, lua_State *co) { return co == shim_budget(L)->task_thread; }

/// lcorolib.c's auxresume, with co as the current thread while it runs.
static int auxresume(lua_State *L, lua_State *co, int narg) {
    int nres;
    if (!lua_checkstack(co, narg)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    lua_xmove(L, co, narg);
    ShimBudget *b = shim_budget(L);
    shim_set_current(b, co);
    int status = lua_resume(co, L, narg, &nres);
    shim_set_current(b, L);
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            lua_pushliteral(L, "too many results to resume");
            return -1;
        }
        lua_xmove(co, L, nres);
        return nres;
    }
    shim_arm_if_reached(L); // a limit error the coroutine returned must not let L run on
    lua_xmove(co, L, 1);
    return -1;
}

/// Resumes co with the narg values on top of L, relaying the await token: while co waits on host
/// work, L yields the token to its own resumer (k continues after) and resumes co with what it
/// gets back. Returns auxresume's result.
static int relay(lua_State *L, lua_State *co, int narg, lua_KFunction k) {
    int r = auxresume(L, co, narg);
    if (r == 1 && lua_type(L, -1) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == shim_await_token() &&
        lua_status(co) == LUA_YIELD) {
        if (lua_isyieldable(L)) return lua_yieldk(L, 1, 0, k);
        lua_pop(L, 1);
        lua_pushvalue(L, lua_upvalueindex(1)); // the host's drop_wait: the wait never starts
        lua_call(L, 0, 0);
        lua_pushstring(L, CANNOT_WAIT);
        return -1;
    }
    return r;
}

static int resume_k(lua_State *L, int status, lua_KContext ctx) {
    (void)status;
    (void)ctx;
    lua_State *co = lua_tothread(L, 1);
    int r = relay(L, co, lua_gettop(L) - 1, resume_k);
    if (r < 0) {
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, -(r + 1));
    return r + 1;
}

static int co_resume(lua_State *L) {
    getco(L);
    return resume_k(L, LUA_OK, 0);
}

static int wrap_k(lua_State *L, int status, lua_KContext ctx) {
    (void)status;
    (void)ctx;
    lua_State *co = lua_tothread(L, lua_upvalueindex(2));
    int r = relay(L, co, lua_gettop(L), wrap_k);
    if (r < 0) {
        int stat = lua_status(co);
        if (stat != LUA_OK && stat != LUA_YIELD) { // an error in the coroutine: close its tbc variables
            ShimBudget *b = shim_budget(L);
            shim_set_current(b, co);
            stat = lua_resetthread(co);
            shim_set_current(b, L);
            shim_arm_if_reached(L);
            lua_xmove(co, L, 1); // the error, or the one a __close handler raised
        }
        if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    return r;
}

static int auxwrap(lua_State *L) { return wrap_k(L, LUA_OK, 0); }

static int co_wrap(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushvalue(L, lua_upvalueindex(1)); // drop_wait
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, auxwrap, 2);
    return 1;
}

static int co_yield(lua_State *L) {
    if (is_task(L, L)) { // lua_yieldk's own error, without a position (it is a C function's)
        lua_pushliteral(L, "attempt to yield from outside a coroutine");
        return lua_error(L);
    }
    return lua_yield(L, lua_gettop(L));
}

static int co_running(lua_State *L) {
    int ismain = lua_pushthread(L);
    int task = is_task(L, L);
    if (task) shim_budget(L)->task_escaped = 1; // the script holds the task's thread now
    lua_pushboolean(L, ismain || task);
    return 2;
}

static int co_isyieldable(lua_State *L) {
    lua_State *co = lua_isnone(L, 1) ? L : getco(L);
    lua_pushboolean(L, lua_isyieldable(co) && !is_task(L, co));
    return 1;
}

int shim_open_coroutines(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION); // the host's drop_wait
    lua_getglobal(L, "coroutine");
    luaL_checktype(L, -1, LUA_TTABLE);
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, co_resume, 1);
    lua_setfield(L, -2, "resume");
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, co_wrap, 1);
    lua_setfield(L, -2, "wrap");
    lua_pushcfunction(L, co_yield);
    lua_setfield(L, -2, "yield");
    lua_pushcfunction(L, co_running);
    lua_setfield(L, -2, "running");
    lua_pushcfunction(L, co_isyieldable);
    lua_setfield(L, -2, "isyieldable");
    return 0;
}
