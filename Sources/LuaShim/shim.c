// LuaShim: trampoline, await continuation, allocator, hook, message handler, protected helpers.
#include "shim.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

static shim_dispatch_fn g_dispatch;
static shim_release_fn g_release;
static char AWAIT_TOKEN;
static char RAISE_TOKEN;
static const char *const BINDING_MT = "lookout.binding";

int shim_direct_args = 0;
static int g_direct_args_checked = 0; // what the probe found (shim_set_direct_args cannot exceed it)

_Static_assert(sizeof(ShimSlot) == 16, "a Lua 5.4 stack slot is 16 bytes");

/// CClosure.upvalue[n] of the running C closure (lobject.h: ClosureHeader is 24 bytes, then f,
/// then the upvalues).
static inline const ShimSlot *closure_upvalue(lua_State *L, int n) {
    const ShimSlot *func = shim_slot(L, 0);
    const char *closure = func->value.p;
    return (const ShimSlot *)(closure + 32) + n;
}

/// Called as probe(42, 2.5, "7", nil, {}) with upvalues (a full userdata, a light userdata to its
/// memory): compares every direct read with the API's answer.
static int probe_direct_reads(lua_State *L) {
    int ok = lua_gettop(L) == 5 && shim_slot(L, 6) == NULL && shim_slot(L, 0) != NULL;
    const ShimSlot *s;
    ok = ok && (s = shim_slot(L, 1)) != NULL && s->tag == SHIM_TAG_INT && s->value.i == 42 && lua_tointeger(L, 1) == 42;
    ok = ok && (s = shim_slot(L, 2)) != NULL && s->tag == SHIM_TAG_FLOAT && s->value.n == 2.5;
    ok = ok && (s = shim_slot(L, 3)) != NULL && s->tag != SHIM_TAG_INT && s->tag != SHIM_TAG_FLOAT && lua_type(L, 3) == LUA_TSTRING;
    ok = ok && (s = shim_slot(L, 4)) != NULL && s->tag == 0 && lua_isnil(L, 4);
    ok = ok && (s = shim_slot(L, 5)) != NULL && s->value.p == lua_topointer(L, 5) && lua_istable(L, 5);
    ok = ok && closure_upvalue(L, 1)->value.p == lua_touserdata(L, lua_upvalueindex(2))
        && closure_upvalue(L, 1)->value.p == lua_touserdata(L, lua_upvalueindex(1));
    lua_pushboolean(L, ok);
    return 1;
}

/// Runs the probe from Lua code on the main thread and in a coroutine; 1 when every read agreed.
static int direct_reads_agree(void) {
    lua_State *L = luaL_newstate();
    if (L == NULL) return 0;
    int ok = 1;
    static const char CALLER[] = "local probe = ... return probe(42, 2.5, '7', nil, {})";
    for (int round = 0; round < 2 && ok; round++) {
        lua_State *T = round == 0 ? L : lua_newthread(L);
        if (luaL_loadstring(T, CALLER) != LUA_OK) { ok = 0; break; }
        void *memory = lua_newuserdatauv(T, 16, 0);
        lua_pushlightuserdata(T, memory);
        lua_pushcclosure(T, probe_direct_reads, 2);
        int nresults = 0;
        int status = round == 0 ? lua_pcall(T, 1, 1, 0) : lua_resume(T, L, 1, &nresults);
        ok = status == LUA_OK && lua_toboolean(T, -1);
    }
    lua_close(L);
    return ok;
}

void shim_install(shim_dispatch_fn dispatch, shim_release_fn release) {
    g_dispatch = dispatch;
    g_release = release;
    g_direct_args_checked = direct_reads_agree();
    __atomic_store_n(&shim_direct_args, g_direct_args_checked, __ATOMIC_RELAXED);
}

int shim_set_direct_args(int on) {
    if (on < 0) return __atomic_load_n(&shim_direct_args, __ATOMIC_RELAXED);
    int now = on && g_direct_args_checked;
    __atomic_store_n(&shim_direct_args, now, __ATOMIC_RELAXED);
    return now;
}

void *shim_await_token(void) { return &AWAIT_TOKEN; }
void *shim_raise_token(void) { return &RAISE_TOKEN; }

int64_t shim_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t shim_thread_id(void) {
#ifdef __linux__
    return (int64_t)syscall(SYS_gettid);
#else
    return -1;
#endif
}

int shim_deprioritize(int64_t thread_id) {
#ifdef __linux__
    if (thread_id <= 0) return -1;
    return setpriority(PRIO_PROCESS, (id_t)thread_id, 19); // Linux: per-thread nice value
#else
    (void)thread_id;
    return -1;
#endif
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
        size_t cap = b->limit + (b->grace > 0 ? SHIM_OVERDRAFT : 0);
        if (b->used >= cap || nsize - old > cap - b->used) return NULL;
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
    int off;      ///< warn("@off") was the last control message (Lookout starts with warnings on)
    int dropping; ///< the message being received is dropped (warnings were off when it began)
    char buffer[1024];
    size_t length;
} WarnState;

/// lua_setwarnf's function: pieces are joined into one message for the host; the control messages
/// "@on" and "@off" (a whole message starting with '@') switch warnings on and off as in lua.c,
/// other control messages are ignored.
static void shim_warnf(void *ud, const char *msg, int tocont) {
    WarnState *w = ud;
    if (w->fn == NULL) return;
    if (w->length == 0 && !w->dropping) {
        if (!tocont && msg[0] == '@') {
            if (strcmp(msg, "@off") == 0) w->off = 1;
            else if (strcmp(msg, "@on") == 0) w->off = 0;
            return;
        }
        if (w->off) w->dropping = 1;
    }
    if (w->dropping) {
        if (!tocont) w->dropping = 0;
        return;
    }
    size_t n = strlen(msg);
    if (w->length + n >= sizeof w->buffer) n = sizeof w->buffer - 1 - w->length;
    memcpy(w->buffer + w->length, msg, n);
    w->length += n;
    w->buffer[w->length] = 0;
    if (!tocont) {
        w->fn(w->ud, w->buffer);
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

/// Stops the running code at a limit: position of the nearest Lua function from `level` up, then
/// the message.
///
/// From the hook (level 0) on the running task's own thread, when it can yield, the hook yields
/// instead of raising and the scheduler ends the task (shim_pushtripmessage): an error raised
/// inside a hook leaves Lua's `allowhook` off on that thread (luaD_hook never gets to turn it back
/// on), so the message handlers and `<close>` handlers that run while the error unwinds would run
/// with no hook at all, and a loop there could never be stopped. Returns 1 after such a yield (the
/// hook must return at once).
///
/// Otherwise it raises; the hook then fires on every instruction of this thread, so a `pcall` in
/// the script cannot swallow the error: it escapes one protected level per instruction until the
/// task ends.
static int limit_error(lua_State *L, ShimBudget *b, int trip, const char *message, int level) {
    b->tripped = trip;
    char text[sizeof b->trip_message];
    text[0] = 0;
    lua_Debug ar;
    for (int i = level; lua_getstack(L, i, &ar); i++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(text, sizeof text, "%s:%d: ", ar.short_src, ar.currentline);
            break;
        }
    }
    size_t used = strlen(text);
    snprintf(text + used, sizeof text - used, "%s", message);
    if (level == 0 && L == b->task_thread && lua_isyieldable(L)) {
        // An interrupt is delivered once: the task's <close> handlers then run under grace (a
        // second Ctrl-C interrupts them in turn).
        if (trip == SHIM_TRIP_INTERRUPT)
            atomic_store_explicit((_Atomic int *)&b->interrupt, 0, memory_order_relaxed);
        memcpy(b->trip_message, text, sizeof text);
        b->trip_yielded = 1;
        lua_yield(L, 0);
        return 1;
    }
    lua_sethook(L, lua_gethook(L), LUA_MASKCOUNT, 1);
    lua_pushstring(L, text);
    return lua_error(L);
}

void shim_pushtripmessage(lua_State *co) {
    ShimBudget *b = shim_budget(co);
    b->trip_yielded = 0;
    lua_pushstring(co, b->trip_message);
}

/// Raises when a limit has been reached: the interrupt flag, the CPU deadline of the slice, the
/// wall-clock deadline of the run. `level` 0 names the running Lua function (the hook), 1 its caller
/// (a C function checking its own loop). Returns 1 when the hook yielded the task at a limit, 0
/// when no limit was reached.
static int check_limits(lua_State *L, int level) {
    ShimBudget *b = shim_budget(L);
    if (atomic_load_explicit((_Atomic int *)&b->interrupt, memory_order_relaxed)) {
        if (limit_error(L, b, SHIM_TRIP_INTERRUPT, "interrupted!", level)) return 1;
    }
    if (b->slice_deadline == 0 && b->run_deadline == 0) return 0;
    int64_t now = shim_now_ns();
    if (b->slice_deadline != 0 && now > b->slice_deadline) {
        char message[128]; // lua_pushfstring has no %.1f
        snprintf(message, sizeof message, "CPU limit exceeded: ran %.1f s without waiting (see --cpu-limit)",
                 (double)b->slice_limit_ns / 1e9);
        if (b->grace > 0)
            snprintf(message, sizeof message,
                     "CPU limit exceeded: error handling or a <close> variable ran %.1f s (see --cpu-limit)",
                     (double)b->slice_limit_ns / 1e9);
        if (limit_error(L, b, SHIM_TRIP_CPU, message, level)) return 1;
    }
    if (b->run_deadline != 0 && now > b->run_deadline) {
        return limit_error(L, b, SHIM_TRIP_TIME, "time limit exceeded (see --time-limit)", level);
    }
    return 0;
}

// ---- Hooks of --trusted scripts (debug.sethook) composed with the limit hook --------------------
//
// debug.sethook and debug.gethook are ldblib.c's (5.4.4), called from Lua as stock's are (no
// wrapper frame: a hook sees the same stack, and "return sethook" is its first event), with one
// addition: sethook also notes what it set in the registry table USER_HOOKS (thread -> UserHook,
// weak keys). The limit watch arms shim_hook on the running thread in place of whatever hook it
// had; when no limit is reached, shim_hook puts back the noted hook and passes it the event it took.

static const char *const USER_HOOKS = "lookout.userhooks";
static const char *const HOOKKEY = "_HOOKKEY"; // ldblib.c's table of Lua hook functions per thread
static void shim_hook(lua_State *L, lua_Debug *ar);

typedef struct UserHook {
    lua_Hook hook;
    int mask;
    int count;
} UserHook;

/// What debug.sethook last set for L1 (from USER_HOOKS; all zero when nothing). Never raises.
static UserHook noted_hook(lua_State *L, lua_State *L1) {
    UserHook saved = {NULL, 0, 0};
    if (!lua_checkstack(L, 3) || (L != L1 && !lua_checkstack(L1, 1))) return saved;
    if (lua_getfield(L, LUA_REGISTRYINDEX, USER_HOOKS) == LUA_TTABLE) {
        lua_pushthread(L1);
        if (L != L1) lua_xmove(L1, L, 1);
        if (lua_rawget(L, -2) == LUA_TUSERDATA) saved = *(UserHook *)lua_touserdata(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return saved;
}

/// Gives L back the hook debug.sethook set for it (none in the sandbox); returns that hook.
static lua_Hook restore_hook(lua_State *L) {
    if (!shim_budget(L)->user_hooks) {
        lua_sethook(L, NULL, 0, 0);
        return NULL;
    }
    UserHook saved = noted_hook(L, L);
    lua_sethook(L, saved.hook, saved.mask, saved.count);
    return saved.hook;
}

/// ldblib.c's hookf: calls the Lua function debug.sethook set for the running thread.
static void lua_function_hook(lua_State *L, lua_Debug *ar) {
    static const char *const hooknames[] = {"call", "return", "line", "count", "tail call"};
    lua_getfield(L, LUA_REGISTRYINDEX, HOOKKEY);
    lua_pushthread(L);
    if (lua_rawget(L, -2) == LUA_TFUNCTION) {
        lua_pushstring(L, hooknames[(int)ar->event]);
        if (ar->currentline >= 0)
            lua_pushinteger(L, ar->currentline);
        else
            lua_pushnil(L);
        lua_getinfo(L, "lS", ar);
        lua_call(L, 2, 0);
    }
}

static lua_State *hook_thread(lua_State *L, int *arg) {
    if (lua_isthread(L, 1)) {
        *arg = 1;
        return lua_tothread(L, 1);
    }
    *arg = 0;
    return L;
}

/// debug.sethook (ldblib.c's db_sethook), noting the hook in USER_HOOKS before setting it, so that
/// an arming that comes in between hands the thread back to the new hook.
static int lib_sethook(lua_State *L) {
    int arg, mask, count;
    lua_Hook func;
    lua_State *L1 = hook_thread(L, &arg);
    if (lua_isnoneornil(L, arg + 1)) {
        lua_settop(L, arg + 1);
        func = NULL;
        mask = 0;
        count = 0;
    } else {
        const char *smask = luaL_checkstring(L, arg + 2);
        luaL_checktype(L, arg + 1, LUA_TFUNCTION);
        count = (int)luaL_optinteger(L, arg + 3, 0);
        func = lua_function_hook;
        mask = 0;
        if (strchr(smask, 'c')) mask |= LUA_MASKCALL;
        if (strchr(smask, 'r')) mask |= LUA_MASKRET;
        if (strchr(smask, 'l')) mask |= LUA_MASKLINE;
        if (count > 0) mask |= LUA_MASKCOUNT;
    }
    if (L != L1 && !lua_checkstack(L1, 1)) return luaL_error(L, "stack overflow");
    if (!luaL_getsubtable(L, LUA_REGISTRYINDEX, HOOKKEY)) {
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_pushvalue(L, -1);
        lua_setmetatable(L, -2);
    }
    lua_pushthread(L1);
    lua_xmove(L1, L, 1);
    lua_pushvalue(L, arg + 1);
    lua_rawset(L, -3);
    if (!luaL_getsubtable(L, LUA_REGISTRYINDEX, USER_HOOKS)) {
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
    }
    lua_pushthread(L1);
    lua_xmove(L1, L, 1);
    if (func == NULL) {
        lua_pushnil(L);
    } else {
        UserHook *noted = lua_newuserdatauv(L, sizeof(UserHook), 0);
        noted->hook = func;
        noted->mask = mask;
        noted->count = count;
    }
    lua_rawset(L, -3);
    shim_budget(L)->user_hooks = 1;
    lua_sethook(L1, func, mask, count);
    return 0;
}

/// debug.gethook (ldblib.c's db_gethook), reporting the hook debug.sethook set also while the
/// limit hook stands in for it.
static int lib_gethook(lua_State *L) {
    int arg;
    lua_State *L1 = hook_thread(L, &arg);
    char buff[5];
    UserHook h = {lua_gethook(L1), lua_gethookmask(L1), lua_gethookcount(L1)};
    if (h.hook == shim_hook) h = noted_hook(L, L1);
    if (h.hook == NULL) {
        luaL_pushfail(L);
        return 1;
    } else if (h.hook != lua_function_hook) {
        lua_pushliteral(L, "external hook");
    } else {
        lua_getfield(L, LUA_REGISTRYINDEX, HOOKKEY);
        if (L != L1 && !lua_checkstack(L1, 1)) return luaL_error(L, "stack overflow");
        lua_pushthread(L1);
        lua_xmove(L1, L, 1);
        lua_rawget(L, -2);
        lua_remove(L, -2);
    }
    int i = 0;
    if (h.mask & LUA_MASKCALL) buff[i++] = 'c';
    if (h.mask & LUA_MASKRET) buff[i++] = 'r';
    if (h.mask & LUA_MASKLINE) buff[i++] = 'l';
    buff[i] = '\0';
    lua_pushstring(L, buff);
    lua_pushinteger(L, h.count);
    return 3;
}

int shim_open_debughooks(lua_State *L) {
    lua_getglobal(L, "debug");
    luaL_checktype(L, -1, LUA_TTABLE);
    lua_pushcfunction(L, lib_sethook);
    lua_setfield(L, -2, "sethook");
    lua_pushcfunction(L, lib_gethook);
    lua_setfield(L, -2, "gethook");
    return 0;
}

/// The count hook, armed by the limit watch (every instruction while armed): stops the code at
/// the limit that was reached, or disarms itself when none is (an arming that came late, or a
/// thread that was current when the watch looked).
static void shim_hook(lua_State *L, lua_Debug *ar) {
    if (check_limits(L, 0)) return;
    lua_Hook user = restore_hook(L);
    if (user != NULL && ar->event != LUA_HOOKCOUNT) user(L, ar); // the event the arming took over
}

void shim_check_budget(lua_State *L) { (void)check_limits(L, 1); }

// ---- Limit watch: the hook is armed only when a limit is reached --------------------------------
//
// With a count hook set, Lua 5.4 traps every instruction (luaG_traceexec), whatever the count: a
// permanent hook costs ordinary code about a third of its speed. Instead a watch thread looks at
// every watched state every WATCH_TICK_NS; when one is past a deadline or interrupted, it sends
// SHIM_ARM_SIGNAL to the state's thread. The handler runs on that thread and arms the hook of the
// Lua thread running there (ShimBudget.current): lua_sethook is safe from a signal handler (see
// its comment in ldebug.c; lua.c stops scripts on Ctrl-C the same way). If the arming hits a
// thread that just stopped running, the next tick arms the one that runs then.

#define SHIM_ARM_SIGNAL SIGURG
#define WATCH_TICK_NS (5 * 1000 * 1000)

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_wake = PTHREAD_COND_INITIALIZER;
static ShimBudget *watch_list;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
/// The budget of the state this OS thread runs; only this thread writes it. The engine is freed on
/// its executor, whose shim_unwatch_limits clears it first, so the handler never sees a freed
/// budget; the watch signals only threads of budgets still in its list.
static __thread ShimBudget *thread_budget;

static void arm_handler(int sig) {
    (void)sig;
    int saved = errno;
    ShimBudget *b = thread_budget;
    if (b != NULL && b->current != NULL) {
        // Keep the events of a hook debug.sethook set: shim_hook passes them on.
        int mask = b->user_hooks ? (lua_gethookmask(b->current) & ~LUA_MASKCOUNT) : 0;
        lua_sethook(b->current, shim_hook, LUA_MASKCOUNT | mask, 1);
    }
    errno = saved;
}

static int limit_reached(const ShimBudget *b, int64_t now) {
    ShimBudgetSnapshot s = shim_budget_snapshot(b);
    if (atomic_load_explicit((_Atomic int *)&b->interrupt, memory_order_relaxed)) return 1;
    return (s.slice_deadline != 0 && now > s.slice_deadline) || (s.run_deadline != 0 && now > s.run_deadline);
}

void shim_arm_if_reached(lua_State *L) {
    if (limit_reached(shim_budget(L), shim_now_ns())) lua_sethook(L, shim_hook, LUA_MASKCOUNT, 1);
}

static void *watch_loop(void *arg) {
    (void)arg;
    pthread_mutex_lock(&watch_lock);
    for (;;) {
        while (watch_list == NULL) pthread_cond_wait(&watch_wake, &watch_lock);
        int64_t now = shim_now_ns();
        for (ShimBudget *b = watch_list; b != NULL; b = b->watch_next)
            if (limit_reached(b, now))
                pthread_kill(atomic_load_explicit((_Atomic pthread_t *)&b->thread, memory_order_relaxed), SHIM_ARM_SIGNAL);
        pthread_mutex_unlock(&watch_lock);
        struct timespec tick = { 0, WATCH_TICK_NS };
        while (nanosleep(&tick, &tick) != 0 && errno == EINTR) {}
        pthread_mutex_lock(&watch_lock);
    }
    return NULL;
}

static void watch_start(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = arm_handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SHIM_ARM_SIGNAL, &action, NULL);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    pthread_create(&thread, &attributes, watch_loop, NULL);
    pthread_attr_destroy(&attributes);
}

/// Makes the calling thread the one the watch signals for b: the state may be created on one
/// thread and run on its executor's. Thread pools block most signals; this thread takes the arming
/// signal from now on (its default action is to ignore it).
static void adopt_thread(ShimBudget *b) {
    static __thread int unblocked;
    if (!unblocked) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SHIM_ARM_SIGNAL);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        unblocked = 1;
    }
    atomic_store_explicit((_Atomic pthread_t *)&b->thread, pthread_self(), memory_order_relaxed);
    thread_budget = b;
}

void shim_watch_limits(lua_State *L) {
    ShimBudget *b = shim_budget(L);
    pthread_once(&watch_once, watch_start);
    b->current = L;
    adopt_thread(b);
    pthread_mutex_lock(&watch_lock);
    b->watch_next = watch_list;
    watch_list = b;
    pthread_cond_signal(&watch_wake);
    pthread_mutex_unlock(&watch_lock);
}

void shim_unwatch_limits(ShimBudget *budget) {
    pthread_mutex_lock(&watch_lock);
    for (ShimBudget **p = &watch_list; *p != NULL; p = &(*p)->watch_next) {
        if (*p == budget) {
            *p = budget->watch_next;
            break;
        }
    }
    pthread_mutex_unlock(&watch_lock);
    if (thread_budget == budget) thread_budget = NULL;
    budget->current = NULL;
}

lua_State *shim_set_current(ShimBudget *budget, lua_State *L) {
    if (thread_budget != budget) adopt_thread(budget);
    lua_State *previous = budget->current;
    budget->current = L;
    return previous;
}

// ---- Grace: script code the host runs for itself ----------------------------------------------------
//
// The host calls script code outside a task's slice, or while it marshals values with allocation
// failures disabled: the message handler and __tostring of an error object, <close> handlers of a
// failed or cancelled task, callbacks and modules run by bindings. That code must not get the
// host's unlimited memory nor run without a CPU limit: it allocates up to SHIM_OVERDRAFT beyond
// the memory limit, and gets the CPU limit of a slice unless a slice is already running (the
// wall-clock limit of the run applies as always). A limit error there ends the protected call.

typedef struct Grace {
    int critical;
    int64_t slice;
    lua_State *current;
} Grace;

/// Starts a grace period for code about to run on L (L is the current thread until it ends).
static void grace_begin(lua_State *L, ShimBudget *b, Grace *g) {
    g->critical = b->host_critical;
    g->slice = b->slice_deadline;
    g->current = shim_set_current(b, L);
    b->host_critical = 0;
    b->grace++;
    b->mark = shim_now_ns();
    if (b->slice_deadline == 0 && b->slice_limit_ns > 0) b->slice_deadline = shim_now_ns() + b->slice_limit_ns;
}

/// Ends a grace period that ran on L. A limit error leaves the hook firing on every instruction
/// of L (see limit_error): it is disarmed, and the thread that runs on is armed at once if a limit
/// is still reached.
static void grace_end(lua_State *L, ShimBudget *b, const Grace *g) {
    b->current = g->current;
    b->grace--;
    b->host_critical = g->critical;
    b->slice_deadline = g->slice;
    b->mark = shim_now_ns();
    if (lua_gethook(L) == shim_hook) restore_hook(L);
    if (b->current != NULL) shim_arm_if_reached(b->current);
}

/// lua_pcall under grace.
static int grace_pcall(lua_State *L, int nargs, int nresults, int msgh) {
    ShimBudget *b = shim_budget(L);
    Grace g;
    grace_begin(L, b, &g);
    int status = lua_pcall(L, nargs, nresults, msgh);
    grace_end(L, b, &g);
    return status;
}

ShimBudgetSnapshot shim_budget_snapshot(const ShimBudget *budget) {
    // The executor thread writes these fields with plain stores; an aligned 64-bit load sees
    // either the old or the new value, which is all the watchdog needs (it re-reads every tick).
    ShimBudgetSnapshot s;
    s.slice_deadline = atomic_load_explicit((_Atomic int64_t *)&budget->slice_deadline, memory_order_relaxed);
    s.run_deadline = atomic_load_explicit((_Atomic int64_t *)&budget->run_deadline, memory_order_relaxed);
    s.mark = atomic_load_explicit((_Atomic int64_t *)&budget->mark, memory_order_relaxed);
    return s;
}

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
    size_t cap = b->limit + (b->grace > 0 ? SHIM_OVERDRAFT : 0);
    if (b->limit > 0 && b->host_critical == 0 && b->used > cap) {
        // The binding grew the state beyond its budget (allowed while Swift ran); refuse now.
        lua_gc(L, LUA_GCCOLLECT);
        if (b->used > cap) luaL_error(L, "not enough memory (memory limit reached; see --memory-limit)");
    }
}

/// A binding's upvalue: the Swift box (first, so the __gc handler finds it as `void **`) and the
/// state's budget, kept here so a call needs no lookup of the allocator's data.
typedef struct BindingSlot {
    void *box;
    ShimBudget *budget;
} BindingSlot;

static int shim_trampoline(lua_State *L) {
    // Upvalue 2 is a light userdata to upvalue 1's memory: read straight from the closure when
    // the probe allowed it (shim_direct_args), which spares an API call per binding call.
    BindingSlot *slot = __atomic_load_n(&shim_direct_args, __ATOMIC_RELAXED)
        ? closure_upvalue(L, 1)->value.p : lua_touserdata(L, lua_upvalueindex(1));
    ShimBudget *b = slot->budget;
    b->host_critical++;
    int r = g_dispatch(L, slot->box);
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
    BindingSlot *slot = lua_newuserdatauv(L, sizeof(BindingSlot), 0);
    slot->box = box;
    slot->budget = shim_budget(L);
    if (luaL_newmetatable(L, BINDING_MT)) {
        lua_pushcfunction(L, shim_gc_binding);
        lua_setfield(L, -2, "__gc");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, slot);
    lua_pushcclosure(L, shim_trampoline, 2);
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

static int lazy_chunk(lua_State *L) {
    const char *text = lua_touserdata(L, lua_upvalueindex(1));
    size_t len = (size_t)lua_tointeger(L, lua_upvalueindex(2));
    int n = lua_gettop(L);
    if (luaL_loadbufferx(L, text, len, lua_tostring(L, lua_upvalueindex(3)), "t") != LUA_OK) return lua_error(L);
    lua_insert(L, 1);
    lua_call(L, n, 1);
    return 1;
}

void shim_pushlazychunk(lua_State *L, const char *text, size_t len, const char *chunkname) {
    lua_pushlightuserdata(L, (void *)text);
    lua_pushinteger(L, (lua_Integer)len);
    lua_pushstring(L, chunkname);
    lua_pushcclosure(L, lazy_chunk, 3);
}

static int tostring_k(lua_State *L) {
    luaL_tolstring(L, 1, NULL);
    return 1;
}

int shim_tostring(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, tostring_k);
    lua_pushvalue(L, idx);
    return grace_pcall(L, 1, 1, 0);
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
    if (grace_pcall(L, 2, 1, 0) != LUA_OK) {
        // Keep why (a limit, a failing __tostring), bounded: the error text is the script's.
        char text[300];
        snprintf(text, sizeof text, "(error while formatting an error: %.200s)",
                 lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?");
        lua_settop(L, top);
        lua_pushstring(L, text);
    }
}

int shim_nilmethod_metatable(lua_State *L, lua_State *co) {
    lua_Debug ar;
    if (!lua_getstack(co, 0, &ar) || !lua_checkstack(co, 3) || !lua_checkstack(L, 2)) return 0;
    int found = 0, after_nil = 0;
    // `obj:m()` compiles to SELF (callee, then obj in the next register) and CALL: the last nil
    // followed by a userdata with a metatable is the failed call's.
    for (int n = 1; n < 256 && lua_getlocal(co, &ar, n) != NULL; n++) {
        if (after_nil && lua_type(co, -1) == LUA_TUSERDATA && lua_getmetatable(co, -1)) {
            if (found) lua_pop(L, 1);
            lua_xmove(co, L, 1);
            found = 1;
        }
        after_nil = lua_isnil(co, -1);
        lua_pop(co, 1);
    }
    return found;
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
    int status = grace_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    return status;
}

int shim_closethread(lua_State *co, lua_State *from) {
    ShimBudget *b = shim_budget(co);
    Grace g;
    grace_begin(co, b, &g);
#if LUA_VERSION_RELEASE_NUM >= 50406
    int status = lua_closethread(co, from);
#else
    (void)from;
    int status = lua_resetthread(co); // Lua 5.4.4 on Debian 12
#endif
    grace_end(co, b, &g);
    return status;
}

void shim_flush_stdout(void) { fflush(stdout); }
