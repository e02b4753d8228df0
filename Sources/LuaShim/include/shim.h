// LuaShim: the only code that may longjmp.
//
// Rules (see README "Architecture"):
// - Swift never calls a Lua API function that can raise. Everything that can raise or yield
//   (lua_error, lua_yieldk, luaL_check*, metamethod-running accessors) is called from here.
// - A Swift binding returns n >= 0 results, SHIM_ERR (error value on top) or SHIM_AWAIT; the C
//   trampoline then returns, raises or yields from a pure C frame.
// - While Swift runs (a binding, or the host marshalling values) the allocator never fails:
//   growth beyond the budget is allowed and the budget is enforced by the trampoline right after.
#ifndef LOOKOUT_LUA_SHIM_H
#define LOOKOUT_LUA_SHIM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#if LUA_VERSION_NUM != 504
#error "Lookout needs Lua 5.4"
#include "shim_json.h"
#include "shim_pattern.h"

#endif

/// Binding results other than a result count.
enum { SHIM_ERR = -1, SHIM_AWAIT = -2 };

/// Which limit stopped a script (ShimBudget.tripped).
enum { SHIM_TRIP_NONE = 0, SHIM_TRIP_CPU = 1, SHIM_TRIP_TIME = 2, SHIM_TRIP_INTERRUPT = 3 };

/// Per-state memory and time budget. It is the allocator's user data, so C reaches it from any
/// thread of the state with lua_getallocf.
typedef struct ShimBudget {
    size_t used;            ///< bytes allocated now
    size_t peak;            ///< most bytes allocated at once
    size_t limit;           ///< growth beyond this is denied (0 = no limit)
    int host_critical;      ///< > 0 while Swift runs: allocations never fail
    int64_t slice_deadline; ///< CLOCK_MONOTONIC ns: CPU deadline of the running slice (0 = none)
    int64_t run_deadline;   ///< CLOCK_MONOTONIC ns: wall-clock deadline of the run (0 = none)
    int64_t slice_limit_ns; ///< the CPU limit between waits, for messages
    int interrupt;          ///< set by any thread (atomically) to stop the running code
    int tripped;            ///< SHIM_TRIP_* of the last stop
    int grace;              ///< > 0 while the host runs script code for itself (error messages,
                            ///< <close> handlers, callbacks): limit + SHIM_OVERDRAFT, CPU-limited
    lua_State *current;     ///< the Lua thread running now (the limit watch arms its hook)
    pthread_t thread;       ///< the OS thread that runs the state (shim_watch_limits)
    struct ShimBudget *watch_next; ///< the limit watch's list
    int64_t mark;           ///< CLOCK_MONOTONIC ns of the last slice start or end (stall watchdog)
    lua_State *task_thread; ///< the thread of the task running now (the hook may yield it at a limit)
    int trip_yielded;       ///< 1 when the hook yielded task_thread at a limit (trip_message says why)
    char trip_message[320]; ///< "file:line: CPU limit exceeded: …" of that yield
    int user_hooks;         ///< a --trusted script called debug.sethook (shim.c: USER_HOOKS)
    int task_escaped;       ///< set when coroutine.running() handed out task_thread (coroutines.c):
                            ///< the scheduler then never reuses that thread for another call
} ShimBudget;

/// What the stall watchdog reads from another thread (relaxed atomic loads).
typedef struct ShimBudgetSnapshot {
    int64_t slice_deadline;
    int64_t run_deadline;
    int64_t mark;
} ShimBudgetSnapshot;

/// Reads the fields the stall watchdog needs, from any thread.
ShimBudgetSnapshot shim_budget_snapshot(const ShimBudget *budget);

/// Bytes beyond the memory limit that code the host runs for a script may allocate (lua-host.md
/// §8.5: formatting the error of a script that hit the limit must still be possible).
#define SHIM_OVERDRAFT ((size_t)1 << 20)

/// Swift's side of the trampoline: runs the binding held by `box`.
typedef int (*shim_dispatch_fn)(lua_State *L, void *box);
/// Releases a box held by a userdata (runs from __gc; must not raise).
typedef void (*shim_release_fn)(void *box);
/// Receives Lua warnings (lua_warning, errors in __gc).
typedef void (*shim_warn_fn)(void *ud, const char *message);

/// Installs the Swift callbacks once per process.
void shim_install(shim_dispatch_fn dispatch, shim_release_fn release);

/// A new state whose allocator is bound to `budget`; NULL when out of memory.
lua_State *shim_newstate(ShimBudget *budget, shim_warn_fn warn, void *warn_ud);
/// The budget of a state (or any of its threads).
ShimBudget *shim_budget(lua_State *L);
/// Opens the standard libraries in protected mode. Returns a Lua status.
int shim_openlibs(lua_State *L);
/// Puts the state under the limit watch; call on the thread that runs it, after the libraries
/// are guarded. The count hook that enforces deadlines and interrupts is armed only when one is
/// reached: a watch thread notices (every few milliseconds) and signals the state's thread, whose
/// handler arms the hook on the Lua thread running there (ShimBudget.current). Until then Lua
/// runs without any hook, at the stock interpreter's speed. The hook disarms itself when no limit
/// is reached.
void shim_watch_limits(lua_State *L);
/// Takes the state out of the limit watch; call before lua_close, on the state's thread.
void shim_unwatch_limits(ShimBudget *budget);
/// Arms the hook on L at once when a limit has been reached: for code that goes on running after
/// a limit error stopped other code (coroutine.resume and coroutine.close return it as a value).
void shim_arm_if_reached(lua_State *L);
/// Sets the thread running now (ShimBudget.current) and returns the previous one; the scheduler
/// calls it around lua_resume.
lua_State *shim_set_current(ShimBudget *budget, lua_State *L);
/// Raises the hook's error ("CPU limit exceeded: …", "time limit exceeded …", "interrupted!") when
/// a limit has been reached; for C functions whose loops the count hook cannot see.
void shim_check_budget(lua_State *L);
/// Replaces the standard library functions whose loops escape the count hook (string.rep,
/// table.insert/remove/move/concat/sort), the `setmetatable` that refuses `__gc`, the `xpcall`
/// whose message handler never runs for a limit error (limits.c), coroutine.close that keeps
/// ShimBudget.current, and load, require and collectgarbage (baselib.c). `trusted` keeps stock's
/// setmetatable (finalizers), load, require and collectgarbage.
/// Call after luaL_openlibs, before the prelude. Returns a Lua status; never raises.
int shim_guard_library(lua_State *L, int trusted);
/// Installs the sandbox's load, require and collectgarbage (baselib.c) in the globals table;
/// `--trusted` scripts keep stock's (does nothing when `trusted`).
void shim_install_baselib(lua_State *L, int trusted);
/// The prelude calls it with the host's drop_wait: installs coroutine.resume, wrap, yield,
/// running and isyieldable as scripts see them (coroutines.c).
int shim_open_coroutines(lua_State *L);
/// After the hook yielded a task at a limit (ShimBudget.trip_yielded): pushes the limit's error
/// message onto the task's thread, which the scheduler then ends like a task that raised it.
void shim_pushtripmessage(lua_State *co);
/// Installs the debug.sethook and debug.gethook of --trusted scripts (ldblib.c's, shim.c): sethook
/// notes the hook it sets so that the limit hook, armed in its place, hands the thread back to it.
int shim_open_debughooks(lua_State *L);
/// Installs print (baselib.c): stock's, writing through the function given (the host's write).
int shim_open_print(lua_State *L);
/// Atomically asks the running code to stop with "interrupted!" (any thread).
void shim_interrupt(ShimBudget *budget, int on);
/// The calling thread's kernel id (Linux), or -1.
int64_t shim_thread_id(void);
/// Gives a thread (by kernel id) the lowest scheduling priority (nice 19; Linux only). Returns 0
/// on success. For the thread of an abandoned Lua state, which cannot be stopped.
int shim_deprioritize(int64_t thread_id);
/// Writes out what C stdio holds for standard output (io.write's buffer).
void shim_flush_stdout(void);
/// Monotonic clock in nanoseconds.
int64_t shim_now_ns(void);

/// Pushes a Lua function that runs the Swift binding `box` (owned by the function from now on).
void shim_pushbinding(lua_State *L, void *box);
/// Pushes a full userdata holding `box` with the metatable named `tname` (already registered).
void shim_pushbox(lua_State *L, void *box, const char *tname);
/// The box held by the userdata at idx when it has metatable `tname` and is still open; else NULL.
void *shim_testbox(lua_State *L, int idx, const char *tname);
/// Marks the userdata's box as closed and returns it (NULL if already closed or not a box).
void *shim_takebox(lua_State *L, int idx, const char *tname);
/// Creates (or fetches) the metatable named tname: __name, __metatable=false, __gc. Pushes it.
/// Returns 1 when it was created now.
int shim_newmetatable(lua_State *L, const char *tname);

/// The unique value a waiting binding yields; the scheduler resumes the task when the wait ends.
void *shim_await_token(void);
/// Resuming a waiting task with this token first makes the binding raise the value after it.
void *shim_raise_token(void);

/// Loads a chunk as text only (binary chunks refused). Returns a Lua status.
int shim_loadtext(lua_State *L, const char *buf, size_t len, const char *chunkname);
/// Pushes a function that compiles `text` (Lua source, never binary) when called and runs it
/// with its arguments, returning the chunk's first result: a `package.preload` loader that costs
/// nothing until `require`. `text` must outlive the state (the process's bundled sources).
void shim_pushlazychunk(lua_State *L, const char *text, size_t len, const char *chunkname);
/// Protected luaL_tolstring of the value at idx: pushes the text, returns a Lua status.
int shim_tostring(lua_State *L, int idx);
/// Protected error text for a failed coroutine: pushes onto L the message of the error object on
/// top of co with a traceback of co appended. Never raises.
void shim_errortext(lua_State *L, lua_State *co);

/// After "attempt to call a nil value (method 'x')" in the dead coroutine `co`: pushes on `L` the
/// metatable of the object the method was looked up on (the value right after the nil callee
/// among the failing function's temporaries) and returns 1; pushes nothing and returns 0 when
/// there is none.
int shim_nilmethod_metatable(lua_State *L, lua_State *co);
/// Protected call with a traceback message handler. Returns a Lua status; error text on top.
int shim_pcall_traceback(lua_State *L, int nargs, int nresults);
/// Resets a dead or suspended thread, running its pending to-be-closed variables.
int shim_closethread(lua_State *co, lua_State *from);

// ---- Arguments read straight from the stack --------------------------------------------------------
// A binding's type checks cost two API calls per argument (lua_type, then lua_tointegerx: the
// type check keeps "12" from becoming 12), which made a Swift binding 1.7x a plain C function
// (README, Benchmarks: P1). Lua 5.4's positive stack indexes are `L->ci->func + idx` below
// `L->top` (lapi.c index2value); these helpers read that slot's type tag and value directly when
// shim_install's probe found lua_State laid out as in lstate.h of every 5.4 release (top at offset
// 16, ci at 32, CallInfo.func first, 16-byte stack slots: the value, then its tag) and compared
// every read with the API's answer. Otherwise (shim_direct_args == 0) they use the API.

/// 1 when arguments and a binding's upvalue are read straight from the stack (see above).
extern int shim_direct_args;

/// One Lua 5.4 stack slot (lobject.h StackValue): the value, then its type tag.
typedef struct ShimSlot {
    union {
        int64_t i;
        double n;
        void *p;
    } value;
    uint8_t tag;
} ShimSlot;

/// Type tags (lobject.h: LUA_VNUMINT, LUA_VNUMFLT).
enum { SHIM_TAG_INT = 3, SHIM_TAG_FLOAT = 3 | (1 << 4) };

/// The slot at positive index idx of L's running function, or NULL at or above the top (a
/// "none" value). Only while shim_direct_args is 1.
static inline const ShimSlot *shim_slot(lua_State *L, int idx) {
    const char *ci = *(char *const *)((const char *)L + 32);
    const ShimSlot *func = *(const ShimSlot *const *)ci;
    const ShimSlot *top = *(const ShimSlot *const *)((const char *)L + 16);
    const ShimSlot *slot = func + idx;
    return slot < top ? slot : NULL;
}

/// The value at idx as an integer when it is a number with an integer value; strings are never
/// converted. Returns 1 and sets *out, or 0.
static inline int shim_tointeger_strict(lua_State *L, int idx, lua_Integer *out) {
    if (__atomic_load_n(&shim_direct_args, __ATOMIC_RELAXED) && idx > 0) {
        const ShimSlot *s = shim_slot(L, idx);
        if (s != NULL && s->tag == SHIM_TAG_INT) {
            *out = s->value.i;
            return 1;
        }
        if (s == NULL || s->tag != SHIM_TAG_FLOAT) return 0;
    } else if (lua_type(L, idx) != LUA_TNUMBER) {
        return 0;
    }
    int ok = 0;
    *out = lua_tointegerx(L, idx, &ok); // a float: integral or not
    return ok;
}

/// The value at idx as a float when it is a number; strings are never converted. Returns 1 and
/// sets *out, or 0.
static inline int shim_tonumber_strict(lua_State *L, int idx, lua_Number *out) {
    if (__atomic_load_n(&shim_direct_args, __ATOMIC_RELAXED) && idx > 0) {
        const ShimSlot *s = shim_slot(L, idx);
        if (s == NULL) return 0;
        if (s->tag == SHIM_TAG_FLOAT) {
            *out = s->value.n;
            return 1;
        }
        if (s->tag == SHIM_TAG_INT) {
            *out = (lua_Number)s->value.i;
            return 1;
        }
        return 0;
    }
    if (lua_type(L, idx) != LUA_TNUMBER) return 0;
    *out = lua_tonumberx(L, idx, NULL);
    return 1;
}

/// Turns the direct reads off (0) or on again (1, when the probe allowed them), for tests and
/// benchmarks; -1 only asks. Returns whether they are on now.
int shim_set_direct_args(int on);

// ---- Function-like macros Swift cannot import ----------------------------------------------------
static inline int shim_upvalueindex(int i) { return lua_upvalueindex(i); }
static const int SHIM_REGISTRYINDEX = LUA_REGISTRYINDEX;
static inline void shim_pop(lua_State *L, int n) { lua_settop(L, -(n) - 1); }
static inline void shim_newtable(lua_State *L) { lua_createtable(L, 0, 0); }
static inline int shim_isnoneornil(lua_State *L, int idx) { return lua_type(L, idx) <= 0; }
static inline void *shim_getextraspace(lua_State *L) { return lua_getextraspace(L); }
static inline void shim_remove(lua_State *L, int idx) { lua_remove(L, idx); }
static inline void shim_insert(lua_State *L, int idx) { lua_insert(L, idx); }
static inline void shim_replace(lua_State *L, int idx) { lua_replace(L, idx); }

#include "shim_json.h"
#include "shim_pattern.h"

#endif
