// Fuzz/pattern.c — differential harness for Sources/LuaShim/pattern.c against liblua's own
// string.find/match/gmatch/gsub (Lua 5.4 from the system), on the same inputs in the same state.
//
// Input: op byte, init byte, n byte, pattern length byte, pattern, [repl length byte, repl], subject.
//   op bits 0-1: find, match, gmatch, gsub; bit 2: find's `plain`; bits 3-4: gsub's replacement
//   (string, table, function, string); bit 5: pass init (as a signed byte); bit 6: pass gsub's n.
// Check: both give the same results (every returned value, every gmatch step, up to 300), or
// both raise the same message ("bad argument ... to 'name'" compared without the name, which
// differs only because the originals are no longer in the string table).
// Inputs whose pattern could make liblua backtrack for long are skipped: (len+2)^q * (len+1)
// must stay under 200,000, where q counts the pattern's quantifier characters.
#include "lua_fuzz.h"
#include "shim.h"
#include "shim_pattern.h"

static lua_State *L;
static ShimBudget budget;
static const char *const NAMES[4] = {"find", "match", "gmatch", "gsub"};

static void setup(void) {
    L = shim_newstate(&budget, NULL, NULL);
    if (!L || shim_openlibs(L) != LUA_OK) abort();
    if (luaL_dostring(L, "orig = {find = string.find, match = string.match, gmatch = string.gmatch,\n"
                         "        gsub = string.gsub}\n"
                         "repl_table = {a = 'A', b = false, n = 7, t = {}, [''] = 'E', ab = 1.5}\n"
                         "function repl_fn(a, b)\n"
                         "  if a == 't' then return {} end\n"
                         "  if a == 'n' then return 1.5 end\n"
                         "  if b then return b end\n"
                         "  if a == '' then return false end\n"
                         "  return a .. '|'\n"
                         "end\n") != LUA_OK)
        abort();
    shim_guard_patterns(L);
    lua_settop(L, 0);
}

/// Pushes message with "to 'name'" of a "bad argument" error replaced by "to '?'".
static void push_normalized_error(int idx) {
    const char *msg = lua_tostring(L, idx);
    if (!msg) {
        lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, idx));
        return;
    }
    const char *bad = strstr(msg, "bad argument #"), *to = bad ? strstr(bad, " to '") : NULL;
    const char *close = to ? strchr(to + 5, '\'') : NULL;
    if (!close) {
        lua_pushstring(L, msg);
        return;
    }
    lua_pushlstring(L, msg, (size_t)(to - msg));
    lua_pushliteral(L, " to '?'");
    lua_pushstring(L, close + 1);
    lua_concat(L, 3);
}

/// Calls the function at base+1 with the nargs arguments above it; leaves in its place a table
/// of the results {n = count, ...} or {err = message}.
static void pack_call(int base, int nargs) {
    int status = lua_pcall(L, nargs, LUA_MULTRET, 0);
    int top = lua_gettop(L);
    lua_createtable(L, top - base, 1);
    if (status != LUA_OK) {
        push_normalized_error(top);
        lua_setfield(L, -2, "err");
    } else {
        for (int i = base + 1; i <= top; i++) {
            lua_pushvalue(L, i);
            lua_rawseti(L, -2, i - base);
        }
        lua_pushinteger(L, top - base);
        lua_setfield(L, -2, "n");
    }
    lua_copy(L, -1, base + 1); // (lua_replace would lose it when there were no results)
    lua_settop(L, base + 1);
}

typedef struct Call {
    int op, plain, repl_kind, pass_init, pass_n;
    lua_Integer init, n;
    const char *pattern, *repl, *subject;
    size_t lp, lr, ls;
} Call;

/// Pushes the function (from `table`: "orig" or "string") and the arguments; returns nargs.
static int push_call(const Call *c, const char *table) {
    lua_getglobal(L, table);
    lua_getfield(L, -1, NAMES[c->op]);
    lua_remove(L, -2);
    lua_pushlstring(L, c->subject, c->ls);
    lua_pushlstring(L, c->pattern, c->lp);
    int nargs = 2;
    if (c->op == 3) {
        if (c->repl_kind == 1) lua_getglobal(L, "repl_table");
        else if (c->repl_kind == 2) lua_getglobal(L, "repl_fn");
        else lua_pushlstring(L, c->repl, c->lr);
        nargs++;
        if (c->pass_n) lua_pushinteger(L, c->n), nargs++;
    } else if (c->pass_init) {
        lua_pushinteger(L, c->init);
        nargs++;
        if (c->op == 0 && c->plain) lua_pushboolean(L, 1), nargs++;
    }
    return nargs;
}

/// Runs the call with one implementation; pushes its outcome table.
static void run(const Call *c, const char *table) {
    int base = lua_gettop(L);
    int nargs = push_call(c, table);
    if (c->op != 2) {
        pack_call(base, nargs);
        return;
    }
    // gmatch: the iterator, then each step's results, up to 300 steps.
    pack_call(base, nargs); // base+1: {n=1, iterator} or {err=...}
    lua_createtable(L, 8, 0); // base+2: steps
    if (lua_getfield(L, base + 1, "err") != LUA_TNIL) {
        lua_setfield(L, base + 2, "err");
    } else {
        lua_pop(L, 1);
        for (int step = 1; step <= 300; step++) {
            int here = lua_gettop(L);
            lua_rawgeti(L, base + 1, 1);
            pack_call(here, 0); // here+1: {n=..., ...} or {err=...}
            lua_pushvalue(L, -1);
            lua_rawseti(L, base + 2, step);
            int done = lua_getfield(L, -1, "err") != LUA_TNIL;
            lua_pop(L, 1);
            lua_getfield(L, -1, "n");
            done = done || lua_tointeger(L, -1) == 0 || (lua_rawgeti(L, -2, 1), lua_isnil(L, -1));
            lua_settop(L, here);
            if (done) break;
        }
    }
    lua_replace(L, base + 1);
    lua_settop(L, base + 1);
}

/// Would liblua's backtracking be too slow on this pattern and subject?
static int too_costly(const char *p, size_t lp, size_t ls) {
    double cost = (double)ls + 1;
    for (size_t i = 0; i < lp; i++)
        if (p[i] == '*' || p[i] == '+' || p[i] == '-' || p[i] == '?') cost *= (double)ls + 2;
    return cost > 2e5;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    Call c;
    c.op = data[0] & 3;
    c.plain = (data[0] >> 2) & 1;
    c.repl_kind = (data[0] >> 3) & 3;
    c.pass_init = (data[0] >> 5) & 1;
    c.pass_n = (data[0] >> 6) & 1;
    c.init = (int8_t)data[1];
    c.n = (int8_t)data[2];
    const char *rest = (const char *)data + 4;
    size_t left = size - 4;
    c.lp = data[3] % (left + 1);
    c.pattern = rest;
    rest += c.lp, left -= c.lp;
    c.repl = "";
    c.lr = 0;
    if (c.op == 3 && (c.repl_kind == 0 || c.repl_kind == 3) && left > 0) {
        c.lr = (unsigned char)rest[0] % left;
        c.repl = rest + 1;
        rest += 1 + c.lr, left -= 1 + c.lr;
    }
    c.subject = rest;
    c.ls = left;
    if (too_costly(c.pattern, c.lp, c.ls)) return 0;
    if (!L) setup();

    run(&c, "orig");   // 1
    run(&c, "string"); // 2
    if (!fuzz_same(L, 1, 2, 0)) {
        fuzz_show("subject", c.subject, c.ls);
        fuzz_show("pattern", c.pattern, c.lp);
        fuzz_show("repl", c.repl, c.lr);
        lua_getfield(L, 1, "err");
        lua_getfield(L, 2, "err");
        fprintf(stderr, "op %s init %lld n %lld; errors: lua %s / shim %s\n", NAMES[c.op],
                (long long)c.init, (long long)c.n, lua_tostring(L, -2), lua_tostring(L, -1));
    }
    fuzz_check(fuzz_same(L, 1, 2, 0), "string.%s differs from Lua's", NAMES[c.op]);
    fuzz_done(&L);
    return 0;
}
