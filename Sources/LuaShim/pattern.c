// LuaShim: string.find, string.match, string.gmatch and string.gsub with a time budget.
//
// An independent implementation of Lua 5.4.4's patterns: same results, same errors (raised at
// the same moment of the search), same recursion limit. What it adds is a step counter: every
// STEP_QUANTUM steps of the matcher (one step = one attempt of one pattern item at one subject
// position, backtracking included; linear scans are charged by their length) it checks the
// state's ShimBudget like the host's count hook does, so a pathological pattern stops at the
// CPU or wall-clock deadline or on an interrupt instead of running for minutes.
//
// Layout:
//   - budget: the countdown and the check;
//   - items: where a single-character item ends and which characters it accepts;
//   - matcher: match_here() walks the pattern, recursing only where it must keep a choice
//     point (captures, quantifiers) and looping otherwise;
//   - captures as Lua values, then the four library functions and the installer.
//
// Subjects and patterns are Lua strings, so the byte at their end is always '\0'. Like Lua's
// matcher this code reads that byte (e.g. the item after a trailing '(' or the character under
// %f at the end of the subject) instead of bounds-checking every look-ahead.
#include "shim_pattern.h"
#include "shim.h"

#include <ctype.h>
#include <string.h>

enum {
    MAX_CAPTURES = 32,    // LUA_MAXCAPTURES
    MAX_DEPTH = 200,      // nested matcher calls allowed before "pattern too complex" (MAXCCALLS)
    STEP_QUANTUM = 10000, // matcher steps between two budget checks
};

#define ESC '%'

// Capture.len for captures that have no length (yet).
enum { CAP_OPEN = -1, CAP_POSITION = -2 };

typedef struct Capture {
    const char *start;
    ptrdiff_t len; // length, CAP_OPEN while unclosed, or CAP_POSITION for ()
} Capture;

typedef struct Matcher {
    lua_State *L;
    const char *subject;     // the whole subject (positions are counted from here)
    const char *subject_end; // *subject_end == '\0'
    const char *pattern_end; // *pattern_end == '\0'
    ptrdiff_t steps_left;    // countdown to the next budget check
    int depth_left;          // match_here() frames still allowed
    int ncaptures;           // captures opened on the current path
    Capture capture[MAX_CAPTURES];
} Matcher;

static void matcher_init(Matcher *m, lua_State *L, const char *s, size_t ls, const char *p,
                         size_t lp) {
    m->L = L;
    m->subject = s;
    m->subject_end = s + ls;
    m->pattern_end = p + lp;
    m->steps_left = STEP_QUANTUM;
    m->depth_left = MAX_DEPTH;
    m->ncaptures = 0;
}

// ---- Budget -----------------------------------------------------------------------------------

// Raises when the script must stop; same messages and tripped codes as the host's count hook.
static void budget_check(Matcher *m) {
    m->steps_left = STEP_QUANTUM;
    shim_check_budget(m->L);
}

// Counts `steps` units of work; the clock is read only once the countdown runs out.
static inline void charge(Matcher *m, ptrdiff_t steps) {
    m->steps_left -= steps;
    if (m->steps_left <= 0) budget_check(m);
}

// ---- Single-character items ---------------------------------------------------------------------
// An item is '.', a plain character, %x (a class or an escaped character) or a set [...]. It may
// be followed by a quantifier, which the matcher reads at the item's end.

// p is at '['. Returns the position just after the set's closing ']'. The first member (after an
// optional '^') is taken literally even when it is ']', and %x skips x.
static const char *set_end(Matcher *m, const char *p) {
    p++;
    if (*p == '^') p++;
    do {
        if (p == m->pattern_end) luaL_error(m->L, "malformed pattern (missing ']')");
        char c = *p++;
        if (c == ESC && p < m->pattern_end) p++;
    } while (*p != ']');
    return p + 1;
}

// Returns the position just after the item that starts at p (p < pattern_end).
static const char *item_end(Matcher *m, const char *p) {
    switch (*p) {
    case ESC:
        if (p + 1 == m->pattern_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 2;
    case '[':
        return set_end(m, p);
    default:
        return p + 1;
    }
}

// Does character c belong to class %cl? A letter that names no class stands for itself, and so
// does any other escaped character. Upper-case class letters are complements. (%z, the NUL
// character, is undocumented since Lua 5.2 but Lua 5.4 still honours it.)
static int class_matches(int c, int cl) {
    int hit;
    switch (tolower(cl)) {
    case 'a': hit = isalpha(c); break;
    case 'c': hit = iscntrl(c); break;
    case 'd': hit = isdigit(c); break;
    case 'g': hit = isgraph(c); break;
    case 'l': hit = islower(c); break;
    case 'p': hit = ispunct(c); break;
    case 's': hit = isspace(c); break;
    case 'u': hit = isupper(c); break;
    case 'w': hit = isalnum(c); break;
    case 'x': hit = isxdigit(c); break;
    case 'z': hit = (c == 0); break; // deprecated in Lua 5.2 but still accepted
    default: return cl == c;
    }
    return isupper(cl) ? !hit : hit;
}

// Does character c belong to the set from p ('[') to close (its ']')? Members are %x classes,
// ranges a-z (a '-' that is first or last is literal) and single characters.
static int set_matches(int c, const char *p, const char *close) {
    int member = 1; // what to answer when c is listed
    p++;
    if (*p == '^') {
        member = 0;
        p++;
    }
    for (; p < close; p++) {
        if (*p == ESC) {
            p++;
            if (class_matches(c, (unsigned char)*p)) return member;
        } else if (p[1] == '-' && p + 2 < close) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return member;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return member;
        }
    }
    return !member;
}

// Does the item p..ep match the subject character at s? Never past the subject's end.
static int item_matches(const Matcher *m, const char *s, const char *p, const char *ep) {
    if (s >= m->subject_end) return 0;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case ESC: return class_matches(c, (unsigned char)p[1]);
    case '[': return set_matches(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

// How many subject characters from s in a row the item p..ep matches (s <= subject_end).
static ptrdiff_t item_run(const Matcher *m, const char *s, const char *p, const char *ep) {
    const char *q = s, *end = m->subject_end;
    switch (*p) {
    case '.':
        q = end;
        break;
    case ESC: {
        int cl = (unsigned char)p[1];
        while (q < end && class_matches((unsigned char)*q, cl)) q++;
        break;
    }
    case '[':
        while (q < end && set_matches((unsigned char)*q, p, ep - 1)) q++;
        break;
    default: {
        char c = *p;
        while (q < end && *q == c) q++;
        break;
    }
    }
    return q - s;
}

// ---- Matcher ------------------------------------------------------------------------------------
// match_here(m, s, p) matches the pattern from p against the subject from s and returns the end
// of the match, or NULL. It loops through items that leave no choice and recurses where a later
// failure must come back: after opening or closing a capture (to undo it) and for each try of a
// quantified item. Those recursions are what MAX_DEPTH limits ("pattern too complex").

static const char *match_here(Matcher *m, const char *s, const char *p);

// Opens capture number ncaptures at s (a position capture when kind is CAP_POSITION).
static const char *open_capture(Matcher *m, const char *s, const char *p, ptrdiff_t kind) {
    int i = m->ncaptures;
    if (i >= MAX_CAPTURES) luaL_error(m->L, "too many captures");
    m->capture[i].start = s;
    m->capture[i].len = kind;
    m->ncaptures = i + 1;
    const char *e = match_here(m, s, p);
    if (e == NULL) m->ncaptures--;
    return e;
}

// Closes the innermost open capture at s.
static const char *close_capture(Matcher *m, const char *s, const char *p) {
    int i = m->ncaptures - 1;
    while (i >= 0 && m->capture[i].len != CAP_OPEN) i--;
    if (i < 0) luaL_error(m->L, "invalid pattern capture");
    m->capture[i].len = s - m->capture[i].start;
    const char *e = match_here(m, s, p);
    if (e == NULL) m->capture[i].len = CAP_OPEN;
    return e;
}

// %1..%9 (and the invalid %0): the text of a closed capture again. A position capture never
// matches (its length, read as unsigned, exceeds any subject).
static const char *match_backref(Matcher *m, const char *s, int digit) {
    int i = digit - '1';
    if (i < 0 || i >= m->ncaptures || m->capture[i].len == CAP_OPEN)
        luaL_error(m->L, "invalid capture index %%%d", i + 1);
    size_t len = (size_t)m->capture[i].len;
    if ((size_t)(m->subject_end - s) < len) return NULL;
    charge(m, (ptrdiff_t)(len >> 6));
    return memcmp(m->capture[i].start, s, len) == 0 ? s + len : NULL;
}

// %bxy at p (just after "%b"): from s, which must hold x, to the matching y.
static const char *match_balance(Matcher *m, const char *s, const char *p) {
    if (p >= m->pattern_end - 1)
        luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (*s != p[0]) return NULL;
    char open = p[0], close = p[1];
    ptrdiff_t depth = 1;
    const char *q = s;
    while (++q < m->subject_end) {
        if (*q == close) {
            if (--depth == 0) break;
        } else if (*q == open) {
            depth++;
        }
    }
    charge(m, q - s);
    return q < m->subject_end ? q + 1 : NULL;
}

// %f[set] at p (just after "%f"): the character before s is not in the set and the one at s is
// (the subject's start and end count as '\0'). Returns the pattern after the set, or NULL.
static const char *match_frontier(Matcher *m, const char *s, const char *p) {
    if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
    const char *ep = set_end(m, p);
    int before = (s == m->subject) ? '\0' : (unsigned char)s[-1];
    int at = (unsigned char)*s;
    if (!set_matches(before, p, ep - 1) && set_matches(at, p, ep - 1)) return ep;
    return NULL;
}

// item* / item+ (s is past the one mandatory match): the longest run first, then shorter ones.
static const char *expand_greedy(Matcher *m, const char *s, const char *p, const char *ep) {
    ptrdiff_t n = item_run(m, s, p, ep);
    charge(m, n);
    do {
        const char *e = match_here(m, s + n, ep + 1);
        if (e != NULL) return e;
    } while (n-- > 0);
    return NULL;
}

// item-: the rest of the pattern first, then one more repetition at a time.
static const char *expand_lazy(Matcher *m, const char *s, const char *p, const char *ep) {
    for (;;) {
        const char *e = match_here(m, s, ep + 1);
        if (e != NULL) return e;
        if (!item_matches(m, s, p, ep)) return NULL;
        s++;
    }
}

// The matcher proper: one item per iteration. Captures, %b, %f, back-references and anchors are
// dispatched first; everything else is a single-character item with an optional quantifier.
static const char *match_here(Matcher *m, const char *s, const char *p) {
    if (m->depth_left == 0) luaL_error(m->L, "pattern too complex");
    m->depth_left--;
    while (p != m->pattern_end) {
        charge(m, 1);
        switch (*p) {
        case '(':
            if (p[1] == ')') s = open_capture(m, s, p + 2, CAP_POSITION);
            else s = open_capture(m, s, p + 1, CAP_OPEN);
            goto done;
        case ')':
            s = close_capture(m, s, p + 1);
            goto done;
        case '$':
            if (p + 1 != m->pattern_end) break; // not last: an ordinary character
            if (s != m->subject_end) s = NULL;
            goto done;
        case ESC:
            if (p[1] == 'b') {
                s = match_balance(m, s, p + 2);
                if (s == NULL) goto done;
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                p = match_frontier(m, s, p + 2);
                if (p == NULL) {
                    s = NULL;
                    goto done;
                }
                continue;
            }
            if (p[1] >= '0' && p[1] <= '9') {
                s = match_backref(m, s, (unsigned char)p[1]);
                if (s == NULL) goto done;
                p += 2;
                continue;
            }
            break; // a class or an escaped character
        default:
            break;
        }
        // A single-character item, maybe quantified.
        const char *ep = item_end(m, p);
        char quantifier = *ep; // '\0' at the pattern's end
        if (!item_matches(m, s, p, ep)) {
            if (quantifier == '*' || quantifier == '?' || quantifier == '-') {
                p = ep + 1; // zero repetitions are fine
                continue;
            }
            s = NULL;
            goto done;
        }
        switch (quantifier) {
        case '?': {
            const char *e = match_here(m, s + 1, ep + 1);
            if (e != NULL) {
                s = e;
                goto done;
            }
            p = ep + 1;
            continue;
        }
        case '+': s = expand_greedy(m, s + 1, p, ep); goto done;
        case '*': s = expand_greedy(m, s, p, ep); goto done;
        case '-': s = expand_lazy(m, s, p, ep); goto done;
        default:
            s++;
            p = ep;
            continue;
        }
    }
done:
    m->depth_left++;
    return s;
}

// ---- Captures as Lua values ----------------------------------------------------------------------

// Locates capture i; without captures, i == 0 stands for the whole match s..e. Returns its length
// and start, or CAP_POSITION after pushing the position.
static ptrdiff_t capture_get(Matcher *m, int i, const char *s, const char *e, const char **start) {
    if (i >= m->ncaptures) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *start = s;
        return e - s;
    }
    const Capture *c = &m->capture[i];
    if (c->len == CAP_OPEN) luaL_error(m->L, "unfinished capture");
    if (c->len == CAP_POSITION) lua_pushinteger(m->L, (lua_Integer)(c->start - m->subject) + 1);
    *start = c->start;
    return c->len;
}

static void push_capture(Matcher *m, int i, const char *s, const char *e) {
    const char *start;
    ptrdiff_t len = capture_get(m, i, s, e, &start);
    if (len != CAP_POSITION) lua_pushlstring(m->L, start, (size_t)len);
}

// Pushes all captures, or the whole match when there are none and s is given. Returns the count.
static int push_captures(Matcher *m, const char *s, const char *e) {
    int n = (m->ncaptures == 0 && s != NULL) ? 1 : m->ncaptures;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) push_capture(m, i, s, e);
    return n;
}

// ---- string.find / string.match -------------------------------------------------------------------

// A 1-based start argument as a 0-based offset; negative counts from the end. May exceed len.
static size_t start_offset(lua_Integer pos, size_t len) {
    if (pos > 0) return (size_t)pos - 1;
    if (pos == 0 || pos < -(lua_Integer)len) return 0;
    return len + (size_t)pos;
}

// Does the pattern use any magic character? (If not, find searches it as plain text.)
static int has_specials(const char *p, size_t lp) {
    for (size_t i = 0; i < lp; i++) {
        switch (p[i]) {
        case '^': case '$': case '*': case '+': case '?':
        case '.': case '(': case '[': case '%': case '-':
            return 1;
        default:
            break;
        }
    }
    return 0;
}

// Plain substring search: the first occurrence of p in s, or NULL.
static const char *find_plain(Matcher *m, const char *s, size_t ls, const char *p, size_t lp) {
    if (lp == 0) return s;
    if (lp > ls) return NULL;
    const char *q = s, *last = s + (ls - lp); // last possible start
    ptrdiff_t cost = 1 + (ptrdiff_t)(lp >> 6);
    while (q <= last) {
        const char *hit = memchr(q, p[0], (size_t)(last - q) + 1);
        if (hit == NULL) return NULL;
        charge(m, cost);
        if (memcmp(hit + 1, p + 1, lp - 1) == 0) return hit;
        q = hit + 1;
    }
    return NULL;
}

static int find_or_match(lua_State *L, int find) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_offset(luaL_optinteger(L, 3, 1), ls);
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    Matcher m;
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        matcher_init(&m, L, s, ls, p, lp);
        const char *hit = find_plain(&m, s + init, ls - init, p, lp);
        if (hit != NULL) {
            lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
            lua_pushinteger(L, (lua_Integer)(hit - s + lp));
            return 2;
        }
    } else {
        int anchored = (*p == '^');
        if (anchored) {
            p++;
            lp--;
        }
        matcher_init(&m, L, s, ls, p, lp);
        const char *start = s + init;
        for (;;) {
            m.ncaptures = 0;
            const char *e = match_here(&m, start, p);
            if (e != NULL) {
                if (!find) return push_captures(&m, start, e);
                lua_pushinteger(L, (lua_Integer)(start - s) + 1);
                lua_pushinteger(L, (lua_Integer)(e - s));
                return 2 + push_captures(&m, NULL, NULL);
            }
            if (anchored || start == m.subject_end) break;
            start++;
        }
    }
    luaL_pushfail(L);
    return 1;
}

static int lib_find(lua_State *L) { return find_or_match(L, 1); }
static int lib_match(lua_State *L) { return find_or_match(L, 0); }

// ---- string.gmatch ----------------------------------------------------------------------------------
// The iterator keeps the subject and the pattern as upvalues 1 and 2 and its position in a
// userdata (upvalue 3). '^' is an ordinary character here, as in Lua. A match may not end where
// the previous one ended (so an empty match right after a match is skipped). Each call starts
// with the full recursion allowance; Lua 5.4.4 instead carries over whatever an error left of its
// counter, so after a caught "pattern too complex" its iterator would recurse without limit.

typedef struct GmatchState {
    size_t next;        // offset where the next search starts (> subject length: done)
    ptrdiff_t last_end; // offset where the previous match ended, or -1
} GmatchState;

static int gmatch_next(lua_State *L) {
    size_t ls, lp;
    const char *s = lua_tolstring(L, lua_upvalueindex(1), &ls);
    const char *p = lua_tolstring(L, lua_upvalueindex(2), &lp);
    GmatchState *g = lua_touserdata(L, lua_upvalueindex(3));
    if (g->next > ls) return 0;
    Matcher m;
    matcher_init(&m, L, s, ls, p, lp);
    for (const char *start = s + g->next; start <= m.subject_end; start++) {
        m.ncaptures = 0;
        const char *e = match_here(&m, start, p);
        if (e != NULL && e - s != g->last_end) {
            g->next = (size_t)(e - s);
            g->last_end = e - s;
            return push_captures(&m, start, e);
        }
    }
    return 0;
}

static int lib_gmatch(lua_State *L) {
    size_t ls;
    luaL_checklstring(L, 1, &ls);
    luaL_checkstring(L, 2);
    size_t init = start_offset(luaL_optinteger(L, 3, 1), ls);
    lua_settop(L, 2);
    GmatchState *g = lua_newuserdatauv(L, sizeof *g, 0);
    g->next = init > ls ? ls + 1 : init;
    g->last_end = -1;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

// ---- string.gsub ------------------------------------------------------------------------------------

// Appends the replacement string (argument 3) for the match s..e: %0 is the match, %1..%9 the
// captures (%1 is the match when there are none), %% a percent sign.
static void add_template(Matcher *m, luaL_Buffer *b, const char *s, const char *e) {
    size_t len;
    const char *t = lua_tolstring(m->L, 3, &len);
    const char *end = t + len;
    charge(m, 1 + (ptrdiff_t)(len >> 6));
    const char *pct;
    while ((pct = memchr(t, ESC, (size_t)(end - t))) != NULL) {
        luaL_addlstring(b, t, (size_t)(pct - t));
        char d = pct[1]; // '\0' when the '%' is last
        if (d == ESC) {
            luaL_addchar(b, ESC);
        } else if (d == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit((unsigned char)d)) {
            const char *start;
            ptrdiff_t n = capture_get(m, d - '1', s, e, &start);
            if (n == CAP_POSITION) luaL_addvalue(b);
            else luaL_addlstring(b, start, (size_t)n);
        } else {
            luaL_error(m->L, "invalid use of '%c' in replacement string", ESC);
        }
        t = pct + 2;
    }
    luaL_addlstring(b, t, (size_t)(end - t));
}

// Appends the replacement for the match s..e according to argument 3's type. A function gets the
// captures, a table is indexed by the first one; false or nil keeps the match. Returns whether
// the text changed.
static int add_replacement(Matcher *m, luaL_Buffer *b, const char *s, const char *e, int rtype) {
    lua_State *L = m->L;
    if (rtype == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (rtype == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_template(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1))
        return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int lib_gsub(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int rtype = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(L,
                     rtype == LUA_TNUMBER || rtype == LUA_TSTRING || rtype == LUA_TFUNCTION ||
                         rtype == LUA_TTABLE,
                     3, "string/function/table");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int anchored = (*p == '^');
    if (anchored) {
        p++;
        lp--;
    }
    Matcher m;
    matcher_init(&m, L, s, ls, p, lp);
    const char *last = NULL; // end of the previous match: no empty match may end there again
    lua_Integer count = 0;
    int changed = 0;
    while (count < max) {
        m.ncaptures = 0;
        const char *e = match_here(&m, s, p);
        if (e != NULL && e != last) {
            count++;
            changed |= add_replacement(&m, &b, s, e, rtype);
            s = last = e;
        } else if (s < m.subject_end) {
            luaL_addchar(&b, *s++);
        } else {
            break;
        }
        if (anchored) break;
    }
    if (changed) {
        luaL_addlstring(&b, s, (size_t)(m.subject_end - s));
        luaL_pushresult(&b);
    } else {
        lua_pushvalue(L, 1); // the original string
    }
    lua_pushinteger(L, count);
    return 2;
}

// ---- Installation -------------------------------------------------------------------------------------

static int guard_patterns(lua_State *L) {
    static const luaL_Reg functions[] = {
        {"find", lib_find}, {"match", lib_match}, {"gmatch", lib_gmatch}, {"gsub", lib_gsub},
        {NULL, NULL},
    };
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushliteral(L, "string");
    if (lua_rawget(L, -2) != LUA_TTABLE) return 0;
    for (const luaL_Reg *f = functions; f->name != NULL; f++) {
        lua_pushstring(L, f->name);
        lua_pushcfunction(L, f->func);
        lua_rawset(L, -3);
    }
    return 0;
}

void shim_guard_patterns(lua_State *L) {
    lua_pushcfunction(L, guard_patterns);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1); // only out of memory; nothing to undo
}
