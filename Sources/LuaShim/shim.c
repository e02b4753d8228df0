// LuaShim: trampoline, await continuation, allocator, hook, message handler, protected helpers.
#include "shim.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static shim_dispatch_fn g_dispatch;
static shim_release_fn g_release;
static char AWAIT_TOKEN;
static char RAISE_TOKEN;
static const char *const BINDING_MT = "lookout.binding";

void shim_install(shim_dispatch_fn dispatch, shim_release_fn release) {
    g_dispatch = dispatch;
    g_release = release;
}

void *shim_await_token(void) { return &AWAIT_TOKEN; }
void *shim_raise_token(void) { return &RAISE_TOKEN; }

int64_t shim_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// ---- Allocator ------------------------------------------------------------------------------------

static void *shim_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    ShimBudget *b = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        b->used -= old;
        return NULL;
    }
    if (nsize > old && b->limit > 0 && b->host_critical == 0) {
        // Deny growth only; the comparison cannot overflow.
        if (b->used >= b->limit || nsize - old > b->limit - b->used) return NULL;
    }
    void *q = realloc(ptr, nsize);
    if (q == NULL) return nsize <= old ? ptr : NULL; // a shrink never fails
    b->used = b->used - old + nsize;
    if (b->used > b->peak) b->peak = b->used;
    return q;
}

static int shim_panic(lua_State *L) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "lookout: unprotected Lua error (this is a bug in Lookout): %s\n",
            msg ? msg : "(error object is not a string)");
    fflush(stderr);
    abort();
    return 0;
}

typedef struct WarnState {
    shim_warn_fn fn;
    void *ud;
    char buffer[1024];
    size_t length;
} WarnState;

static void shim_warnf(void *ud, const char *msg, int tocont) {
    WarnState *w = ud;
    if (w->fn == NULL) return;
    size_t n = strlen(msg);
    if (w->length + n >= sizeof w->buffer) n = sizeof w->buffer - 1 - w->length;
    memcpy(w->buffer + w->length, msg, n);
    w->length += n;
    w->buffer[w->length] = 0;
    if (!tocont) {
        // "@on"/"@off" control messages are ignored: warnings are always routed to the logger.
        if (w->buffer[0] != '@') w->fn(w->ud, w->buffer);
        w->length = 0;
        w->buffer[0] = 0;
    }
}

lua_State *shim_newstate(ShimBudget *budget, shim_warn_fn warn, void *warn_ud) {
    lua_State *L = lua_newstate(shim_alloc, budget);
    if (L == NULL) return NULL;
    lua_atpanic(L, shim_panic);
    // The warn state lives as long as the Lua state: a userdata anchored in the registry.
    budget->host_critical++;
    WarnState *w = lua_newuserdatauv(L, sizeof(WarnState), 0);
    memset(w, 0, sizeof *w);
    w->fn = warn;
    w->ud = warn_ud;
    lua_setfield(L, LUA_REGISTRYINDEX, "lookout.warnstate");
    budget->host_critical--;
    lua_setwarnf(L, shim_warnf, w);
    return L;
}

ShimBudget *shim_budget(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

static int openlibs(lua_State *L) {
    luaL_openlibs(L);
    return 0;
}

int shim_openlibs(lua_State *L) {
    lua_pushcfunction(L, openlibs);
    return lua_pcall(L, 0, 0, 0);
}

// ---- Hook: deadlines and interrupts ---------------------------------------------------------------

/// Raises a limit error from a hook: position of the running Lua function, then the message.
/// The hook then fires on every instruction of this thread, so a `pcall` in the script cannot
/// swallow the error: it escapes one protected level per instruction until the task ends.
static int limit_error(lua_State *L, ShimBudget *b, int trip, const char *message) {
    b->tripped = trip;
    lua_sethook(L, lua_gethook(L), LUA_MASKCOUNT, 1);
    luaL_where(L, 0);
    lua_pushstring(L, message);
    lua_concat(L, 2);
    return lua_error(L);
}

static void shim_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    ShimBudget *b = shim_budget(L);
    if (atomic_load_explicit((_Atomic int *)&b->interrupt, memory_order_relaxed)) {
        limit_error(L, b, SHIM_TRIP_INTERRUPT, "interrupted!");
    }
    if (b->slice_deadline == 0 && b->run_deadline == 0) return;
    int64_t now = shim_now_ns();
    if (b->slice_deadline != 0 && now > b->slice_deadline) {
        char message[96]; // lua_pushfstring has no %.1f
        snprintf(message, sizeof message, "CPU limit exceeded: ran %.1f s without waiting (see --cpu-limit)",
                 (double)b->slice_limit_ns / 1e9);
        limit_error(L, b, SHIM_TRIP_CPU, message);
    }
    if (b->run_deadline != 0 && now > b->run_deadline) {
        limit_error(L, b, SHIM_TRIP_TIME, "time limit exceeded (see --time-limit)");
    }
}

void shim_sethook(lua_State *L, int count) { lua_sethook(L, shim_hook, LUA_MASKCOUNT, count); }

void shim_interrupt(ShimBudget *budget, int on) {
    atomic_store_explicit((_Atomic int *)&budget->interrupt, on, memory_order_relaxed);
}

// ---- Trampoline -----------------------------------------------------------------------------------

static int shim_after_await(lua_State *L, int status, lua_KContext ctx) {
    (void)status;
    (void)ctx;
    // The stack holds exactly what the scheduler resumed the task with.
    if (lua_gettop(L) >= 1 && lua_touserdata(L, 1) == &RAISE_TOKEN) {
        lua_settop(L, 2);
        return lua_error(L);
    }
    return lua_gettop(L);
}

static void enforce_budget(lua_State *L, ShimBudget *b) {
    if (b->limit > 0 && b->host_critical == 0 && b->used > b->limit) {
        // The binding grew the state beyond its budget (allowed while Swift ran); refuse now.
        lua_gc(L, LUA_GCCOLLECT);
        if (b->used > b->limit) luaL_error(L, "not enough memory (memory limit reached; see --memory-limit)");
    }
}

static int shim_trampoline(lua_State *L) {
    void **slot = lua_touserdata(L, lua_upvalueindex(1));
    ShimBudget *b = shim_budget(L);
    b->host_critical++;
    int r = g_dispatch(L, *slot);
    b->host_critical--;
    if (r >= 0) {
        enforce_budget(L, b);
        return r;
    }
    if (r == SHIM_ERR) {
        if (lua_type(L, -1) == LUA_TSTRING) { // prefix the caller's position, like luaL_error
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    if (r == SHIM_AWAIT) {
        lua_settop(L, 0);
        lua_pushlightuserdata(L, &AWAIT_TOKEN);
        return lua_yieldk(L, 1, 0, shim_after_await);
    }
    return luaL_error(L, "internal error: binding returned status %d", r);
}

static int shim_gc_binding(lua_State *L) {
    void **slot = lua_touserdata(L, 1);
    if (slot != NULL && *slot != NULL) {
        g_release(*slot);
        *slot = NULL;
    }
    return 0;
}

void shim_pushbinding(lua_State *L, void *box) {
    void **slot = lua_newuserdatauv(L, sizeof(void *), 0);
    *slot = box;
    if (luaL_newmetatable(L, BINDING_MT)) {
        lua_pushcfunction(L, shim_gc_binding);
        lua_setfield(L, -2, "__gc");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);
    lua_pushcclosure(L, shim_trampoline, 1);
}

// ---- Userdata boxes -------------------------------------------------------------------------------

static int shim_gc_box(lua_State *L) {
    void **slot = lua_touserdata(L, 1);
    if (slot != NULL && *slot != NULL) {
        g_release(*slot);
        *slot = NULL;
    }
    return 0;
}

int shim_newmetatable(lua_State *L, const char *tname) {
    if (!luaL_newmetatable(L, tname)) return 0;
    lua_pushcfunction(L, shim_gc_box);
    lua_setfield(L, -2, "__gc");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    return 1;
}

void shim_pushbox(lua_State *L, void *box, const char *tname) {
    void **slot = lua_newuserdatauv(L, sizeof(void *), 0);
    *slot = box;
    luaL_setmetatable(L, tname);
}

void *shim_testbox(lua_State *L, int idx, const char *tname) {
    void **slot = luaL_testudata(L, idx, tname);
    return slot ? *slot : NULL;
}

void *shim_takebox(lua_State *L, int idx, const char *tname) {
    void **slot = luaL_testudata(L, idx, tname);
    if (slot == NULL) return NULL;
    void *box = *slot;
    *slot = NULL;
    return box;
}

// ---- Protected helpers ----------------------------------------------------------------------------

int shim_loadtext(lua_State *L, const char *buf, size_t len, const char *chunkname) {
    return luaL_loadbufferx(L, buf, len, chunkname, "t");
}

static int tostring_k(lua_State *L) {
    luaL_tolstring(L, 1, NULL);
    return 1;
}

int shim_tostring(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, tostring_k);
    lua_pushvalue(L, idx);
    return lua_pcall(L, 1, 1, 0);
}

/// The message of an error object: strings as they are, tables and userdata through __tostring,
/// anything else described by its type.
static void push_message(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TSTRING) {
        lua_pushvalue(L, idx);
    } else if (luaL_callmeta(L, idx, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
        // message pushed by __tostring
    } else {
        lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, idx));
    }
}

static int errortext_k(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    // argument 2 is the error object (moved from co)
    push_message(L, 2);
    const char *msg = lua_tostring(L, -1);
    luaL_traceback(L, co, msg, 0);
    return 1;
}

void shim_errortext(lua_State *L, lua_State *co) {
    int top = lua_gettop(L);
    lua_pushcfunction(L, errortext_k);
    lua_pushthread(co);
    lua_xmove(co, L, 1); // the thread
    lua_pushvalue(co, -1);
    lua_xmove(co, L, 1); // the error object (a copy; co keeps its own)
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
        lua_settop(L, top);
        lua_pushliteral(L, "(error while formatting an error)");
    }
}

static int msgh(lua_State *L) {
    push_message(L, 1);
    luaL_traceback(L, L, lua_tostring(L, -1), 1);
    return 1;
}

int shim_pcall_traceback(lua_State *L, int nargs, int nresults) {
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, msgh);
    lua_insert(L, base);
    int status = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    return status;
}

int shim_closethread(lua_State *co, lua_State *from) {
#if LUA_VERSION_RELEASE_NUM >= 50406
    return lua_closethread(co, from);
#else
    (void)from;
    return lua_resetthread(co); // Lua 5.4.4 on Debian 12
#endif
}
