// LuaShim: standard library functions whose C loops would escape the count hook.
//
// The count hook that enforces --cpu-limit, --time-limit and interrupts only runs between Lua
// instructions. A C function of the standard library runs to its end without it, so any library
// loop whose length a script chooses and that does not allocate (and so is not bounded by
// --memory-limit) could run for hours. Audit of Lua 5.4's libraries:
//
//   string.rep("", n) / string.rep("", n, "")   n iterations appending nothing    → replaced here
//   table.move(a, f, e, t, b)                    e - f + 1 get/set pairs            → replaced here
//   table.concat(t, sep, i, j)                   j - i + 1 appends (empty strings
//                                                from a C __index add nothing)       → replaced here
//   table.insert / table.remove                  #t shifts (#t comes from __len)    → replaced here
//   table.sort                                   n log n comparisons, n from __len
//                                                (up to 2^31) with C metamethods    → plain arrays
//                                                sorted here; otherwise its
//                                                comparator is wrapped in one that counts
//   setmetatable with __gc                       Lua runs finalizers with hooks off → refused here
//   xpcall's message handler                     runs with hooks off after a hook
//                                                error                              → skipped then
//   string.pattern functions                     see pattern.c
//
// Bounded without help: string.format (widths and precisions have at most two digits, results
// at most ~420 bytes per item), string.byte/char, utf8.char/codepoint/len/offset/codes and
// table.unpack/select (ranges clamped to the string or limited by the Lua stack, 1,000,000
// slots), string.pack/unpack (fixed sizes, padding bounded by the memory limit), string.sub,
// upper, lower, reverse (linear in a string that already exists), load (a C reader returning
// text forever either fails to parse or fills the lexer's buffer, which the memory limit stops).
//
// The replacements keep Lua 5.4.4's results and error messages; every CHECK_EVERY iterations of a
// loop they check the state's budget with shim_check_budget, which raises the hook's own message
// ("CPU limit exceeded: …", "time limit exceeded (see --time-limit)", "interrupted!").
#include "shim.h"

#include <limits.h>
#include <string.h>

enum { CHECK_EVERY = 4096 };

/// A countdown to the next budget check.
typedef struct Meter {
    lua_State *L;
    int left;
} Meter;

static inline void tick(Meter *m) {
    if (--m->left <= 0) {
        m->left = CHECK_EVERY;
        shim_check_budget(m->L);
    }
}

/// Counts `steps` iterations at once (a loop that checks after each pass).
static inline void charge(Meter *m, size_t steps) {
    if (steps >= (size_t)m->left) {
        m->left = CHECK_EVERY;
        shim_check_budget(m->L);
    } else {
        m->left -= (int)steps;
    }
}

// ---- string.rep ---------------------------------------------------------------------------------

#define MAX_STRING ((size_t)INT_MAX) // lstrlib.c's MAXSIZE on 64-bit platforms

static int lib_rep(lua_State *L) {
    size_t l, lsep;
    const char *s = luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    const char *sep = luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        // Lua's loop would append nothing n times (2^62 times for string.rep("", 1 << 62)).
        lua_pushliteral(L, "");
    } else if (l + lsep < l || l + lsep > MAX_STRING / (size_t)n) {
        return luaL_error(L, "resulting string too large");
    } else {
        // At most MAX_STRING / (l + lsep) iterations, each copying at least one byte of a buffer
        // that the memory limit already allowed.
        size_t total = (size_t)n * l + (size_t)(n - 1) * lsep;
        luaL_Buffer b;
        char *p = luaL_buffinitsize(L, &b, total);
        while (n-- > 1) {
            memcpy(p, s, l);
            p += l;
            if (lsep > 0) {
                memcpy(p, sep, lsep);
                p += lsep;
            }
        }
        memcpy(p, s, l);
        luaL_pushresultsize(&b, total);
    }
    return 1;
}

// ---- table functions (ltablib.c with budget checks) -----------------------------------------------

enum { TAB_R = 1, TAB_W = 2, TAB_L = 4, TAB_RW = TAB_R | TAB_W };

static int has_field(lua_State *L, const char *key, int n) {
    lua_pushstring(L, key);
    return lua_rawget(L, -n) != LUA_TNIL;
}

/// Argument arg must be a table, or have the metamethods the operation needs.
static void check_table(lua_State *L, int arg, int what) {
    if (lua_type(L, arg) == LUA_TTABLE) return;
    int n = 1;
    if (lua_getmetatable(L, arg) && (!(what & TAB_R) || has_field(L, "__index", ++n)) &&
        (!(what & TAB_W) || has_field(L, "__newindex", ++n)) &&
        (!(what & TAB_L) || has_field(L, "__len", ++n))) {
        lua_pop(L, n);
    } else {
        luaL_checktype(L, arg, LUA_TTABLE); // raises
    }
}

static lua_Integer length_of(lua_State *L, int arg, int what) {
    check_table(L, arg, what | TAB_L);
    return luaL_len(L, arg);
}

static int lib_insert(lua_State *L) {
    Meter m = {L, CHECK_EVERY};
    lua_Integer e = length_of(L, 1, TAB_RW);
    e = (lua_Integer)((lua_Unsigned)e + 1u); // first empty element
    lua_Integer pos;
    switch (lua_gettop(L)) {
    case 2:
        pos = e;
        break;
    case 3:
        pos = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
        for (lua_Integer i = e; i > pos; i--) { // move up elements
            tick(&m);
            lua_geti(L, 1, i - 1);
            lua_seti(L, 1, i);
        }
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_seti(L, 1, pos);
    return 0;
}

static int lib_remove(lua_State *L) {
    Meter m = {L, CHECK_EVERY};
    lua_Integer size = length_of(L, 1, TAB_RW);
    lua_Integer pos = luaL_optinteger(L, 2, size);
    if (pos != size)
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 1, "position out of bounds"); // #1 as 5.4.4
    lua_geti(L, 1, pos); // the result
    for (; pos < size; pos++) {
        tick(&m);
        lua_geti(L, 1, pos + 1);
        lua_seti(L, 1, pos);
    }
    lua_pushnil(L);
    lua_seti(L, 1, pos);
    return 1;
}

static int lib_move(lua_State *L) {
    Meter m = {L, CHECK_EVERY};
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    lua_Integer t = luaL_checkinteger(L, 4);
    int tt = !lua_isnoneornil(L, 5) ? 5 : 1; // destination table
    check_table(L, 1, TAB_R);
    check_table(L, tt, TAB_W);
    if (e >= f) {
        luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
        lua_Integer n = e - f + 1;
        luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
        if (t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ))) {
            for (lua_Integer i = 0; i < n; i++) {
                tick(&m);
                lua_geti(L, 1, f + i);
                lua_seti(L, tt, t + i);
            }
        } else {
            for (lua_Integer i = n - 1; i >= 0; i--) {
                tick(&m);
                lua_geti(L, 1, f + i);
                lua_seti(L, tt, t + i);
            }
        }
    }
    lua_pushvalue(L, tt);
    return 1;
}

static void add_field(lua_State *L, luaL_Buffer *b, lua_Integer i) {
    lua_geti(L, 1, i);
    if (!lua_isstring(L, -1))
        luaL_error(L, "invalid value (%s) at index %I in table for 'concat'", luaL_typename(L, -1), (LUAI_UACINT)i);
    luaL_addvalue(b);
}

static int lib_concat(lua_State *L) {
    Meter m = {L, CHECK_EVERY};
    lua_Integer last = length_of(L, 1, TAB_R);
    size_t lsep;
    const char *sep = luaL_optlstring(L, 2, "", &lsep);
    lua_Integer i = luaL_optinteger(L, 3, 1);
    last = luaL_optinteger(L, 4, last);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (; i < last; i++) {
        tick(&m);
        add_field(L, &b, i);
        luaL_addlstring(&b, sep, lsep);
    }
    if (i == last) add_field(L, &b, i);
    luaL_pushresult(&b);
    return 1;
}

// ---- setmetatable ---------------------------------------------------------------------------------

// Lua runs __gc metamethods with every hook turned off (lgc.c: GCTM sets allowhook = 0), at any
// allocation of any task and from lua_close, so no limit can stop a finalizer that loops; and a
// finalizer cannot be wrapped reliably either, because Lua reads __gc from the metatable when it
// finalizes, after the script may have replaced it. Lua marks an object for finalization only
// when its metatable has a __gc field at the moment setmetatable is called, so refusing such
// metatables here means no object of a script is ever finalized. Scripts release resources with
// `<close>` variables instead, which run under the limits. (Host userdata keep their C __gc.)
static int lib_setmetatable(lua_State *L) {
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    if (t == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            luaL_argerror(L, 2,
                          "__gc metamethods are not allowed: finalizers run outside the CPU and time "
                          "limits; use a <close> variable");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1)); // the original setmetatable
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

// ---- table.sort ------------------------------------------------------------------------------------

// Lua's sort runs n log n comparisons in C (n from __len, up to 2^31), with no Lua code in between
// when the comparator and the metamethods are C functions. Two paths:
//  - plain arrays: a table without a metatable, no comparator, and every element an integer, every
//    element a float (no NaN) or every element a string. These are sorted here, in a buffer the
//    memory limit counts (when it would not fit, Lua's in-place sort runs instead), with budget
//    checks while copying and after every partition. `<` on such values runs no metamethod, so
//    the result is the one Lua's sort gives (any order of equal values is allowed), and the table
//    is left as it was if a limit stops the sort. This path is also faster than Lua's, which goes
//    through the API for every comparison (P8).
//  - everything else: the original sort with a comparator that counts: the default `<`, or the
//    script's comparator called through it.

static _Thread_local int sort_countdown = CHECK_EVERY; // one Lua state per executor thread

static int counting_less(lua_State *L) {
    if (--sort_countdown <= 0) {
        sort_countdown = CHECK_EVERY;
        shim_check_budget(L);
    }
    if (lua_type(L, lua_upvalueindex(1)) == LUA_TNONE) {
        lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
    } else {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 2, 1);
    }
    return 1;
}

/// A string element: its bytes (NUL-terminated, as Lua keeps them) and its index in the copy.
typedef struct SortString {
    const char *s;
    size_t len;
    lua_Integer at;
} SortString;

/// lvm.c's l_strcmp(a, b) < 0: strcoll piece by piece, so embedded zeros order as Lua orders them.
static int string_less(const SortString *a, const SortString *b) {
    const char *l = a->s, *r = b->s;
    size_t ll = a->len, lr = b->len;
    for (;;) {
        int c = strcoll(l, r);
        if (c != 0) return c < 0;
        size_t len = strlen(l); // the same in both
        if (len == lr) return 0; // r ends here: l >= r
        if (len == ll) return 1; // l ends here, r goes on: l < r
        len++;
        l += len; ll -= len;
        r += len; lr -= len;
    }
}

#define NUMBER_LESS(a, b) (*(a) < *(b))
#define STRING_LESS(a, b) string_less((a), (b))

// Introsort: quicksort with a median-of-three pivot, heapsort below a depth limit (so no input is
// quadratic), insertion sort for short runs. Every partition and sift charges the meter.
#define DEFINE_SORT(NAME, T, LESS)                                                                     \
    static void NAME##_insertion(T *a, size_t n) {                                                     \
        for (size_t i = 1; i < n; i++) {                                                               \
            T v = a[i];                                                                                \
            size_t j = i;                                                                              \
            for (; j > 0 && LESS(&v, &a[j - 1]); j--) a[j] = a[j - 1];                                 \
            a[j] = v;                                                                                  \
        }                                                                                              \
    }                                                                                                  \
    static void NAME##_sift(T *a, size_t root, size_t n) {                                             \
        T v = a[root];                                                                                 \
        for (size_t child; (child = 2 * root + 1) < n; root = child) {                                 \
            if (child + 1 < n && LESS(&a[child], &a[child + 1])) child++;                              \
            if (!LESS(&v, &a[child])) break;                                                           \
            a[root] = a[child];                                                                        \
        }                                                                                              \
        a[root] = v;                                                                                   \
    }                                                                                                  \
    static void NAME##_heap(Meter *m, T *a, size_t n) {                                                \
        for (size_t i = n / 2; i-- > 0;) { NAME##_sift(a, i, n); tick(m); }                            \
        for (size_t i = n; i-- > 1;) {                                                                 \
            T v = a[0]; a[0] = a[i]; a[i] = v;                                                         \
            NAME##_sift(a, 0, i);                                                                      \
            tick(m);                                                                                   \
        }                                                                                              \
    }                                                                                                  \
    static void NAME##_sort(Meter *m, T *a, size_t n, int depth) {                                     \
        while (n > 16) {                                                                               \
            if (depth-- == 0) { NAME##_heap(m, a, n); return; }                                        \
            size_t mid = n / 2, last = n - 1;                                                          \
            T t;                                                                                       \
            if (LESS(&a[mid], &a[0])) { t = a[mid]; a[mid] = a[0]; a[0] = t; }                         \
            if (LESS(&a[last], &a[mid])) {                                                             \
                t = a[last]; a[last] = a[mid]; a[mid] = t;                                             \
                if (LESS(&a[mid], &a[0])) { t = a[mid]; a[mid] = a[0]; a[0] = t; }                     \
            }                                                                                          \
            T pivot = a[mid];                                                                          \
            size_t i = 0, j = last;                                                                    \
            for (;;) {                                                                                 \
                while (LESS(&a[i], &pivot)) i++;                                                       \
                while (LESS(&pivot, &a[j])) j--;                                                       \
                if (i >= j) break;                                                                     \
                t = a[i]; a[i] = a[j]; a[j] = t;                                                       \
                i++; j--;                                                                              \
            }                                                                                          \
            charge(m, n);                                                                              \
            size_t left = j + 1; /* a[0..j] <= pivot <= a[j+1..n-1] */                                 \
            if (left < n - left) {                                                                     \
                NAME##_sort(m, a, left, depth);                                                        \
                a += left; n -= left;                                                                  \
            } else {                                                                                   \
                NAME##_sort(m, a + left, n - left, depth);                                             \
                n = left;                                                                              \
            }                                                                                          \
        }                                                                                              \
        NAME##_insertion(a, n);                                                                        \
    }

DEFINE_SORT(ints, lua_Integer, NUMBER_LESS)
DEFINE_SORT(floats, lua_Number, NUMBER_LESS)
DEFINE_SORT(strings, SortString, STRING_LESS)

static int depth_for(size_t n) {
    int d = 0;
    while (n > 1) { n >>= 1; d += 2; }
    return d;
}

enum { SORT_INTS, SORT_FLOATS, SORT_STRINGS, SORT_OTHER };

/// Which plain path sorts the table at 1 (n elements), or SORT_OTHER.
static int plain_kind(lua_State *L, Meter *m, lua_Integer n) {
    int kind = -1;
    for (lua_Integer i = 1; i <= n; i++) {
        int k;
        switch (lua_rawgeti(L, 1, i)) {
        case LUA_TNUMBER:
            if (lua_isinteger(L, -1)) k = SORT_INTS;
            else k = lua_tonumber(L, -1) == lua_tonumber(L, -1) ? SORT_FLOATS : SORT_OTHER; // NaN
            break;
        case LUA_TSTRING: k = SORT_STRINGS; break;
        default: k = SORT_OTHER; break;
        }
        lua_pop(L, 1);
        if (kind == -1) kind = k;
        if (k != kind || k == SORT_OTHER) return SORT_OTHER;
        tick(m);
    }
    return kind;
}

/// Copies the numbers of the table at 1 into a buffer the memory limit counts, sorts them with
/// NAME##_sort and writes them back (inside sort_plain: uses L, m, count and depth).
#define SORT_NUMBERS(T, NAME, TO, PUSH)                                                                \
    do {                                                                                               \
        T *a = lua_newuserdatauv(L, count * sizeof *a, 0);                                             \
        for (size_t i = 0; i < count; i++) {                                                           \
            lua_rawgeti(L, 1, (lua_Integer)i + 1);                                                     \
            a[i] = TO(L, -1);                                                                          \
            lua_pop(L, 1);                                                                             \
            tick(&m);                                                                                  \
        }                                                                                              \
        NAME##_sort(&m, a, count, depth);                                                              \
        for (size_t i = 0; i < count; i++) {                                                           \
            PUSH(L, a[i]);                                                                             \
            lua_rawseti(L, 1, (lua_Integer)i + 1);                                                     \
        }                                                                                              \
    } while (0)

/// Sorts a plain array (see above); returns 0 when the table is not one.
static int sort_plain(lua_State *L, lua_Integer n) {
    Meter m = {L, CHECK_EVERY};
    int kind = plain_kind(L, &m, n);
    size_t count = (size_t)n;
    int depth = depth_for(count);
    // The buffers must fit beside what the state holds: near the memory limit, Lua's in-place
    // sort still succeeds where this one would fail.
    size_t need = count * (kind == SORT_STRINGS ? sizeof(SortString) + 16 : sizeof(lua_Integer));
    ShimBudget *b = shim_budget(L);
    if (b->limit > 0 && b->used + need > b->limit) return 0;
    switch (kind) {
    case SORT_INTS:
        SORT_NUMBERS(lua_Integer, ints, lua_tointeger, lua_pushinteger);
        return 1;
    case SORT_FLOATS:
        SORT_NUMBERS(lua_Number, floats, lua_tonumber, lua_pushnumber);
        return 1;
    case SORT_STRINGS: {
        // The copy keeps every string alive (and its bytes where they are) until the end.
        lua_createtable(L, n, 0);
        int copy = lua_gettop(L);
        SortString *a = lua_newuserdatauv(L, count * sizeof *a, 0);
        for (size_t i = 0; i < count; i++) {
            lua_rawgeti(L, 1, (lua_Integer)i + 1);
            a[i].s = lua_tolstring(L, -1, &a[i].len);
            a[i].at = (lua_Integer)i + 1;
            lua_rawseti(L, copy, (lua_Integer)i + 1);
            tick(&m);
        }
        strings_sort(&m, a, count, depth);
        for (size_t i = 0; i < count; i++) {
            lua_rawgeti(L, copy, a[i].at);
            lua_rawseti(L, 1, (lua_Integer)i + 1);
        }
        return 1;
    }
    default:
        return 0;
    }
}

static int lib_sort(lua_State *L) {
    lua_Integer n = length_of(L, 1, TAB_RW);
    luaL_argcheck(L, n < INT_MAX, 1, "array too big");
    int custom = !lua_isnoneornil(L, 2);
    if (custom) luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    if (!custom && n > 1 && lua_type(L, 1) == LUA_TTABLE && !lua_getmetatable(L, 1) && sort_plain(L, n)) return 0;
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1)); // the original table.sort
    lua_pushvalue(L, 1);
    if (custom) {
        lua_pushvalue(L, 2);
        lua_pushcclosure(L, counting_less, 1);
    } else {
        lua_pushcfunction(L, counting_less);
    }
    lua_call(L, 2, 0);
    return 0;
}

// ---- xpcall --------------------------------------------------------------------------------------------

// A message handler runs while its error unwinds. When that error is a limit the hook raised, Lua
// runs the handler with every hook off (the hook never returned), so a handler that loops could
// never be stopped. The script's handler is therefore skipped for limit errors: the error object
// stays the limit's message, and the task ends at its next instruction anyway.
//
// The handler runs under checked_handler, one C frame more than stock. For the common
// `xpcall(f, debug.traceback)` that frame would show as a first "[C]: in ?" line, so when the
// handler is debug.traceback itself (upvalue 2), checked_handler builds the traceback as it would,
// from the level below itself: the same text as stock's.
static int checked_handler(lua_State *L) {
    if (shim_budget(L)->tripped != SHIM_TRIP_NONE) {
        lua_settop(L, 1);
        return 1;
    }
    if (lua_tocfunction(L, lua_upvalueindex(1)) != NULL &&
        lua_tocfunction(L, lua_upvalueindex(1)) == lua_tocfunction(L, lua_upvalueindex(2))) {
        // ldblib.c's db_traceback with a message and no level: a non-string message stays as it is.
        const char *msg = lua_tostring(L, 1);
        if (msg == NULL && !lua_isnoneornil(L, 1)) {
            lua_settop(L, 1);
            return 1;
        }
        luaL_traceback(L, L, msg, 1);
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1)); // the script's handler
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/// lbaselib.c's finishpcall.
static int xpcall_done(lua_State *L, int status, lua_KContext extra) {
    if (status != LUA_OK && status != LUA_YIELD) {
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

/// lbaselib.c's luaB_xpcall with the handler under checked_handler (upvalue 1: debug.traceback as
/// the library opened it, or nil).
static int lib_xpcall(lua_State *L) {
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, checked_handler, 2);
    lua_replace(L, 2);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, xpcall_done); // tasks can still wait inside
    return xpcall_done(L, status, 2);
}

// ---- coroutine.close: the limit watch knows which thread runs -----------------------------------------
// (coroutine.resume and coroutine.wrap keep it themselves: coroutines.c)

/// Calls the original function (upvalue 1) with the thread in argument 1 as the current thread
/// (shim_set_current) and the calling thread current again afterwards, also when it raises: the
/// limit watch arms the hook of the current thread, so a loop inside a script's own coroutine,
/// or in a `__close` handler that coroutine.close runs, is stopped like any other.
static int lib_on_thread(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    if (co == NULL) return luaL_typeerror(L, 1, "coroutine");
    ShimBudget *b = shim_budget(L);
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    shim_set_current(b, co);
    int status = lua_pcall(L, n, LUA_MULTRET, 0);
    shim_set_current(b, L);
    shim_arm_if_reached(L);  // a limit error the coroutine returned must not let L run on
    if (status != LUA_OK) return lua_error(L);
    return lua_gettop(L);
}

static void wrap_on_thread(lua_State *L, const char *name) {
    if (lua_getfield(L, -1, "coroutine") == LUA_TTABLE) {
        lua_getfield(L, -1, name);
        lua_pushcclosure(L, lib_on_thread, 1);
        lua_setfield(L, -2, name);
    }
    lua_pop(L, 1);
}

// ---- Installation -------------------------------------------------------------------------------

static void set_function(lua_State *L, const char *library, const char *name, lua_CFunction f) {
    if (lua_getfield(L, -1, library) == LUA_TTABLE) {
        lua_pushcfunction(L, f);
        lua_setfield(L, -2, name);
    }
    lua_pop(L, 1);
}

static int guard_library(lua_State *L) {
    int trusted = lua_toboolean(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    set_function(L, "string", "rep", lib_rep);
    set_function(L, "table", "insert", lib_insert);
    set_function(L, "table", "remove", lib_remove);
    set_function(L, "table", "move", lib_move);
    set_function(L, "table", "concat", lib_concat);
    if (lua_getfield(L, -1, "table") == LUA_TTABLE) {
        lua_getfield(L, -1, "sort");
        lua_pushcclosure(L, lib_sort, 1);
        lua_setfield(L, -2, "sort");
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, "debug");
    if (lua_type(L, -1) == LUA_TTABLE) lua_getfield(L, -1, "traceback"); else lua_pushnil(L);
    lua_remove(L, -2);
    lua_pushcclosure(L, lib_xpcall, 1);
    lua_setfield(L, -2, "xpcall");
    if (!trusted) { // --trusted scripts may have finalizers (README: How Lookout's Lua differs)
        lua_getfield(L, -1, "setmetatable");
        lua_pushcclosure(L, lib_setmetatable, 1);
        lua_setfield(L, -2, "setmetatable");
    }
    wrap_on_thread(L, "close");
    lua_pop(L, 1);
    shim_install_baselib(L, trusted);
    return 0;
}

int shim_guard_library(lua_State *L, int trusted) {
    lua_pushcfunction(L, guard_library);
    lua_pushboolean(L, trusted);
    int status = lua_pcall(L, 1, 0, 0);
    if (status != LUA_OK) lua_pop(L, 1);
    return status;
}
