// json.c — Lookout's JSON codec for Lua 5.4 (see shim_json.h for the Lua-visible surface).
//
// Layout: locale-independent number text · output buffer · encoder (values, tables, strings,
// paths for errors) · decoder (hand-written recursive descent scanner) · safe wrappers · module.
//
// Everything that can fail raises a Lua error (longjmp), so temporaries live in Lua memory:
// the encoder's output buffer is a plain userdata on the stack, the decoder uses luaL_Buffer.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE // strtod_l, uselocale, newlocale on glibc
#endif

#include "shim_json.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __APPLE__
#include <xlocale.h>
#endif

#define JSON_DEFAULT_DEPTH 1000
// Encoding and decoding recurse in C (per level ≈64 bytes to decode, ≈300 to encode at -O2):
// this ceiling on max_depth keeps C stack use under ~2 MB whatever a script asks for (Lookout
// runs each Lua state on a 16 MB thread).
#define JSON_DEPTH_CEILING 5000
// Per-depth table size hints are remembered for this many levels.
#define HINT_LEVELS 32
#define HINT_CAP 4096

// Keeps cold or bulky helpers out of the recursive frames (smaller C stack per nesting level).
#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

static char EMPTY_ARRAY; // &EMPTY_ARRAY is json.empty_array

// Bytes that need care inside a JSON string: control characters, '"' and '\'. The encoder
// escapes them; the decoder's fast scan stops at them.
static const unsigned char SPECIAL[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 0x00
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 0x10
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x20: '"'
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x30
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x40
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, // 0x50: '\'
};

// ---- Locale-independent number text ---------------------------------------------------------

static locale_t c_locale; // the "C" locale, or 0 if newlocale failed (then the global one is used)
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

/// strtod in the C locale.
static double c_strtod(const char *s) {
    return c_locale ? strtod_l(s, NULL, c_locale) : strtod(s, NULL);
}

/// snprintf("%.*g") in the C locale (the host may have called setlocale).
static int c_format_g(char *out, size_t size, int precision, double d) {
    locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
    int n = snprintf(out, size, "%.*g", precision, d);
    if (old) uselocale(old);
    return n;
}

/// Writes v in decimal; returns the length (at most 20).
static int format_int(char *out, lua_Integer v) {
    char tmp[24];
    int n = 0, len = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) out[len++] = '-';
    while (n) out[len++] = tmp[--n];
    return len;
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/// Exact value of decimal digits × 10^exp10 when it can be computed with one correctly rounded
/// operation (mantissa ≤ 2^53, |exp10| ≤ 22: Clinger's fast path). Returns 0 if not.
/// nsig counts the significant digits (from the first non-zero one): mant holds their exact
/// value only while nsig ≤ 19, so a longer mantissa is never trusted, even when it wrapped to a
/// small number or to 0 (digits that are a multiple of 2^64, e.g. 18446744073709551616).
static int fast_float(uint64_t mant, int nsig, long exp10, double *out) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    if (nsig > 19) return 0;
    if (mant == 0) {
        *out = 0.0;
        return 1;
    }
    if (mant > (UINT64_C(1) << 53) || exp10 < -22 || exp10 > 22) return 0;
    *out = exp10 < 0 ? (double)mant / POW10[-exp10] : (double)mant * POW10[exp10];
    return 1;
#else
    (void)mant, (void)nsig, (void)exp10, (void)out;
    return 0;
#endif
}

/// Writes digits of m (no sign) and returns their count.
static int put_digits(char *out, uint64_t m) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

/// Fast path of format_double for a (> 0, not integral) with at most 15 significant digits and
/// a decimal exponent in -4..14 (what %.15g prints in fixed notation). The candidate digits come
/// from a * 10^k; they are accepted only if they read back (exactly, via fast_float) as a, in
/// which case they are the correctly rounded 15-digit decimal, i.e. what %.15g prints.
/// Returns the length written after *out, or 0 when the slow path must decide.
static int format_short_fixed(char *out, double a) {
    int x = 0; // estimate of the decimal exponent; an error of one only changes the digit count
    if (a >= 1) {
        while (x < 15 && a >= POW10[x + 1]) x++;
    } else {
        while (x > -5 && a * POW10[-x] < 1) x--;
    }
    int k = 14 - x; // scale so that a * 10^k has 15 integer digits
    if (x < -4 || x > 14 || k > 22) return 0;
    double scaled = a * POW10[k];
    if (scaled >= 1e15) return 0;
    uint64_t m = (uint64_t)(scaled + 0.5);
    double back;
    if (!fast_float(m, 15, -k, &back) || back != a) return 0;
    while (m % 10 == 0 && k > 0) m /= 10, k--; // %g drops trailing zeros
    char digits[24];
    int n = put_digits(digits, m), len = 0;
    int point = n - k; // digits before the decimal point
    if (point - 1 < -4 || point - 1 > 14 || k <= 0) return 0;
    if (point <= 0) { // 0.000ddd
        out[len++] = '0';
        out[len++] = '.';
        for (int i = point; i < 0; i++) out[len++] = '0';
        memcpy(out + len, digits, (size_t)n);
        len += n;
    } else { // ddd.ddd
        memcpy(out, digits, (size_t)point);
        len = point;
        out[len++] = '.';
        memcpy(out + len, digits + point, (size_t)(n - point));
        len += n - point;
    }
    out[len] = '\0';
    return len;
}

/// Writes the shortest of %.15g/%.16g/%.17g that reads back as exactly d, with ".0" added to
/// integral values so they stay floats. out holds 40 bytes. Returns the length, 0 for NaN/inf.
static int format_double(char *out, double d) {
    int len;
    if (!isfinite(d)) return 0;
    if (fabs(d) < 1e15 && d == (double)(int64_t)d) { // integral: exact, no exponent (fast path)
        len = 0;
        if (signbit(d)) out[len++] = '-';
        len += format_int(out + len, (lua_Integer)fabs(d));
    } else if ((len = format_short_fixed(out + signbit(d), fabs(d))) > 0) {
        if (signbit(d)) out[0] = '-';
        return len + (signbit(d) ? 1 : 0);
    } else {
        for (int precision = 15; precision <= 17; precision++) {
            len = c_format_g(out, 40, precision, d);
            if (precision == 17 || c_strtod(out) == d) break;
        }
        if (strpbrk(out, ".e")) return len;
    }
    out[len++] = '.';
    out[len++] = '0';
    out[len] = '\0';
    return len;
}

// ---- Output buffer -----------------------------------------------------------------------------
// A growable byte buffer whose bytes are a plain userdata in a fixed stack slot. Growing pushes a
// bigger userdata and replaces the slot; the old block is ordinary garbage. No finalizer is
// involved, so an error (even out of memory) at any point cannot leak: Lua owns every byte.

typedef struct JBuf {
    char *data;
    size_t len, cap;
    int slot; ///< stack index of the userdata holding data
} JBuf;

/// Pushes the first block of the buffer.
static void jbuf_init(lua_State *L, JBuf *b) {
    b->cap = 256;
    b->len = 0;
    b->data = lua_newuserdatauv(L, b->cap, 0);
    b->slot = lua_gettop(L);
}

/// Makes room for `need` more bytes, doubling the capacity. Uses one free stack slot.
static NOINLINE void jbuf_grow(lua_State *L, JBuf *b, size_t need) {
    size_t cap = b->cap;
    while (cap - b->len < need) {
        if (cap > ((size_t)-1) / 2) luaL_error(L, "json.encode: output too large");
        cap *= 2;
    }
    char *p = lua_newuserdatauv(L, cap, 0);
    memcpy(p, b->data, b->len);
    lua_replace(L, b->slot);
    b->data = p;
    b->cap = cap;
}

static inline char *jbuf_reserve(lua_State *L, JBuf *b, size_t n) {
    if (b->cap - b->len < n) jbuf_grow(L, b, n);
    return b->data + b->len;
}

static inline void jbuf_add(lua_State *L, JBuf *b, const char *s, size_t n) {
    memcpy(jbuf_reserve(L, b, n), s, n);
    b->len += n;
}

static inline void jbuf_addc(lua_State *L, JBuf *b, char c) {
    *jbuf_reserve(L, b, 1) = c;
    b->len++;
}

// ---- Encoder: state and error paths ------------------------------------------------------------

/// One step of the path from the root to the value being encoded (lives in the C frames).
typedef struct PathSeg {
    struct PathSeg *up;    ///< the container's own segment (NULL: the container is the root)
    struct PathSeg *down;  ///< set only while an error message is built
    const void *container; ///< the table holding the value (for cycle detection)
    int key_idx;           ///< stack index of the object key, or 0 for an array index
    lua_Integer index;     ///< 1-based array index when key_idx == 0
} PathSeg;

typedef struct Encoder {
    lua_State *L;
    JBuf *buf; ///< the output
    const char *indent; ///< NULL: compact output
    size_t indent_len;
    int sort_keys;
    int max_depth;
    int array_mt; ///< stack index of json.array_mt
} Encoder;

static int is_identifier(const char *s, size_t len) {
    if (len == 0 || (s[0] >= '0' && s[0] <= '9')) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/// Appends a key as `["..."]` with '"', '\' and control characters escaped.
static void add_quoted_key(luaL_Buffer *b, const char *s, size_t len) {
    luaL_addstring(b, "[\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20) {
            char hex[8];
            snprintf(hex, sizeof hex, "\\u%04x", c);
            luaL_addstring(b, hex);
        } else {
            if (c == '"' || c == '\\') luaL_addchar(b, '\\');
            luaL_addchar(b, (char)c);
        }
    }
    luaL_addstring(b, "\"]");
}

/// Appends one path step: ".name", `["odd key"]` or "[index]".
static void add_segment(lua_State *L, luaL_Buffer *b, const PathSeg *seg) {
    char num[48];
    if (seg->key_idx == 0) {
        snprintf(num, sizeof num, "[%lld]", (long long)seg->index);
        luaL_addstring(b, num);
    } else if (lua_type(L, seg->key_idx) == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, seg->key_idx, &len);
        if (is_identifier(s, len)) {
            luaL_addchar(b, '.');
            luaL_addlstring(b, s, len);
        } else {
            add_quoted_key(b, s, len);
        }
    } else if (lua_isinteger(L, seg->key_idx)) {
        snprintf(num, sizeof num, "[%lld]", (long long)lua_tointeger(L, seg->key_idx));
        luaL_addstring(b, num);
    } else if (lua_type(L, seg->key_idx) == LUA_TNUMBER) {
        num[0] = '[';
        int n = format_double(num + 1, lua_tonumber(L, seg->key_idx));
        if (n == 0) n = snprintf(num + 1, sizeof num - 1, "%g", lua_tonumber(L, seg->key_idx));
        luaL_addlstring(b, num, (size_t)n + 1);
        luaL_addchar(b, ']');
    } else {
        luaL_addstring(b, "[?]");
    }
}

/// Appends the path of `leaf`: "$" then one step per level (iterative: no deep C recursion).
static void add_path(lua_State *L, luaL_Buffer *b, PathSeg *leaf) {
    PathSeg *root = NULL;
    for (PathSeg *s = leaf, *below = NULL; s; below = s, s = s->up) {
        s->down = below;
        root = s;
    }
    luaL_addchar(b, '$');
    for (PathSeg *s = root; s; s = s->down) add_segment(L, b, s);
}

/// Raises "json.encode: <fmt...> at <path>".
NOINLINE static void encode_fail(Encoder *e, PathSeg *path, const char *fmt, ...) {
    lua_State *L = e->L;
    luaL_Buffer b;
    va_list ap;
    luaL_checkstack(L, 4, NULL);
    va_start(ap, fmt);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    luaL_buffinit(L, &b);
    add_path(L, &b, path);
    luaL_pushresult(&b);
    lua_pushfstring(L, "json.encode: %s at %s", lua_tostring(L, -2), lua_tostring(L, -1));
    lua_error(L);
}

// ---- Encoder: scalars --------------------------------------------------------------------------

/// Appends s as a JSON string: bytes copied as they are except '"', '\' and control characters.
static void encode_string(Encoder *e, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    lua_State *L = e->L;
    JBuf *b = e->buf;
    const char *end = s + len;
    jbuf_reserve(L, b, len + 2);
    b->data[b->len++] = '"';
    while (s < end) {
        const char *run = s;
        while (s < end && !SPECIAL[(unsigned char)*s]) s++;
        if (s > run) jbuf_add(L, b, run, (size_t)(s - run));
        if (s == end) break;
        unsigned char c = (unsigned char)*s++;
        char *out = jbuf_reserve(L, b, 6);
        out[0] = '\\';
        switch (c) {
        case '"': out[1] = '"'; b->len += 2; break;
        case '\\': out[1] = '\\'; b->len += 2; break;
        case '\b': out[1] = 'b'; b->len += 2; break;
        case '\f': out[1] = 'f'; b->len += 2; break;
        case '\n': out[1] = 'n'; b->len += 2; break;
        case '\r': out[1] = 'r'; b->len += 2; break;
        case '\t': out[1] = 't'; b->len += 2; break;
        default:
            memcpy(out + 1, "u00", 3);
            out[4] = hex[c >> 4];
            out[5] = hex[c & 15];
            b->len += 6;
        }
    }
    jbuf_addc(L, b, '"');
}

NOINLINE static void encode_number(Encoder *e, int idx, PathSeg *path) {
    char num[40];
    int n;
    if (lua_isinteger(e->L, idx)) {
        n = format_int(num, lua_tointeger(e->L, idx));
    } else if ((n = format_double(num, lua_tonumber(e->L, idx))) == 0) {
        encode_fail(e, path, "cannot encode NaN/inf");
    }
    jbuf_add(e->L, e->buf, num, (size_t)n);
}

/// Newline plus `level` indents (pretty mode only).
static void newline(Encoder *e, int level) {
    if (!e->indent) return;
    char *out = jbuf_reserve(e->L, e->buf, 1 + (size_t)level * e->indent_len);
    *out++ = '\n';
    for (int i = 0; i < level; i++, out += e->indent_len) memcpy(out, e->indent, e->indent_len);
    e->buf->len += 1 + (size_t)level * e->indent_len;
}

// ---- Encoder: tables -----------------------------------------------------------------------------

static void encode_value(Encoder *e, int idx, PathSeg *path, int depth);

/// Appends the key at kidx (string, or number turned into a key string) and the ':' after it.
NOINLINE static void encode_key(Encoder *e, int kidx, PathSeg *table_path) {
    lua_State *L = e->L;
    int t = lua_type(L, kidx);
    if (t == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, kidx, &len);
        encode_string(e, s, len);
    } else if (t == LUA_TNUMBER) { // never lua_tolstring here: it would break lua_next
        char num[44];
        int n = lua_isinteger(L, kidx) ? format_int(num + 1, lua_tointeger(L, kidx))
                                       : format_double(num + 1, lua_tonumber(L, kidx));
        if (n == 0) encode_fail(e, table_path, "cannot encode NaN/inf key");
        num[0] = num[n + 1] = '"';
        jbuf_add(L, e->buf, num, (size_t)n + 2);
    } else {
        encode_fail(e, table_path, "cannot encode %s key", lua_typename(L, t));
    }
    if (e->indent) jbuf_add(L, e->buf, ": ", 2);
    else jbuf_addc(L, e->buf, ':');
}

/// Appends items 1..n of the table at idx as a JSON array (holes become null).
static void encode_array(Encoder *e, int idx, lua_Integer n, PathSeg *path, int depth) {
    lua_State *L = e->L;
    PathSeg seg = {path, NULL, lua_topointer(L, idx), 0, 0};
    if (n == 0) {
        jbuf_add(L, e->buf, "[]", 2);
        return;
    }
    jbuf_addc(L, e->buf, '[');
    for (lua_Integer i = 1; i <= n; i++) {
        if (i > 1) jbuf_addc(L, e->buf, ',');
        newline(e, depth);
        seg.index = i;
        lua_rawgeti(L, idx, i);
        encode_value(e, lua_gettop(L), &seg, depth);
        lua_pop(L, 1);
    }
    newline(e, depth - 1);
    jbuf_addc(L, e->buf, ']');
}

/// Appends the table at idx as a JSON object, in lua_next order.
static void encode_object(Encoder *e, int idx, PathSeg *path, int depth) {
    lua_State *L = e->L;
    PathSeg seg = {path, NULL, lua_topointer(L, idx), 0, 0};
    int first = 1;
    jbuf_addc(L, e->buf, '{');
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int vidx = lua_gettop(L);
        if (!first) jbuf_addc(L, e->buf, ',');
        first = 0;
        newline(e, depth);
        encode_key(e, vidx - 1, path);
        seg.key_idx = vidx - 1;
        encode_value(e, vidx, &seg, depth);
        lua_pop(L, 1);
    }
    newline(e, depth - 1);
    jbuf_addc(L, e->buf, '}');
}

/// A key string to sort by; `slot` finds the original key again.
typedef struct SortKey {
    const char *s;
    size_t len;
    lua_Integer slot;
} SortKey;

static int compare_keys(const void *a, const void *b) {
    const SortKey *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->slot < y->slot ? -1 : x->slot > y->slot; // 1 and "1": keep a stable order
}

/// Pushes a key table K (K[2i-1] = key string, K[2i] = original key); returns the key count.
NOINLINE static lua_Integer collect_keys(Encoder *e, int idx, PathSeg *path) {
    lua_State *L = e->L;
    lua_Integer n = 0;
    lua_newtable(L);
    int keys = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int t = lua_type(L, -1);
        if (t == LUA_TSTRING) {
            lua_pushvalue(L, -1);
        } else if (t == LUA_TNUMBER) {
            char num[40];
            int len = lua_isinteger(L, -1) ? format_int(num, lua_tointeger(L, -1))
                                           : format_double(num, lua_tonumber(L, -1));
            if (len == 0) encode_fail(e, path, "cannot encode NaN/inf key");
            lua_pushlstring(L, num, (size_t)len);
        } else {
            encode_fail(e, path, "cannot encode %s key", lua_typename(L, t));
        }
        lua_rawseti(L, keys, 2 * n + 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, keys, 2 * n + 2);
        n++;
    }
    return n;
}

/// Appends the table at idx as a JSON object with keys in bytewise order.
NOINLINE static void encode_sorted_object(Encoder *e, int idx, PathSeg *path, int depth) {
    lua_State *L = e->L;
    PathSeg seg = {path, NULL, lua_topointer(L, idx), 0, 0};
    lua_Integer n = collect_keys(e, idx, path);
    int keys = lua_gettop(L);
    SortKey *sorted = lua_newuserdatauv(L, (size_t)n * sizeof(SortKey), 0);
    for (lua_Integer i = 0; i < n; i++) {
        lua_rawgeti(L, keys, 2 * i + 1); // stays alive in K after the pop
        sorted[i].s = lua_tolstring(L, -1, &sorted[i].len);
        sorted[i].slot = i;
        lua_pop(L, 1);
    }
    qsort(sorted, (size_t)n, sizeof(SortKey), compare_keys);
    jbuf_addc(L, e->buf, '{');
    for (lua_Integer i = 0; i < n; i++) {
        if (i > 0) jbuf_addc(L, e->buf, ',');
        newline(e, depth);
        encode_string(e, sorted[i].s, sorted[i].len);
        if (e->indent) jbuf_add(L, e->buf, ": ", 2);
        else jbuf_addc(L, e->buf, ':');
        lua_rawgeti(L, keys, 2 * sorted[i].slot + 2); // original key, for the lookup and path
        seg.key_idx = lua_gettop(L);
        lua_pushvalue(L, -1);
        lua_rawget(L, idx);
        encode_value(e, lua_gettop(L), &seg, depth);
        lua_pop(L, 2);
    }
    newline(e, depth - 1);
    jbuf_addc(L, e->buf, '}');
    lua_pop(L, 2); // sorted, K
}

enum { SHAPE_OBJECT, SHAPE_ARRAY, SHAPE_EMPTY };

/// Decides how a table without array_mt encodes. For arrays *len gets the length to write.
NOINLINE static int table_shape(Encoder *e, int idx, PathSeg *path, lua_Integer *len) {
    lua_State *L = e->L;
    lua_Integer count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1) {
            lua_Integer k = lua_tointeger(L, -1);
            count++;
            if (k > max) max = k;
            continue;
        }
        int t = lua_type(L, -1);
        if (t != LUA_TSTRING && t != LUA_TNUMBER)
            encode_fail(e, path, "cannot encode %s key", lua_typename(L, t));
        lua_pop(L, 1); // a string or non-positive-integer key: an object
        return SHAPE_OBJECT;
    }
    if (count == 0) return SHAPE_EMPTY;
    if (max > 10 && max - count > count) // max > 2 * count, without overflow
        encode_fail(e, path, "excessively sparse array");
    *len = max;
    return SHAPE_ARRAY;
}

static int has_array_mt(Encoder *e, int idx) {
    if (!lua_getmetatable(e->L, idx)) return 0;
    int same = lua_rawequal(e->L, -1, e->array_mt);
    lua_pop(e->L, 1);
    return same;
}

/// The length to write for a table with array_mt: its border (lua_rawlen), or, when positive
/// integer keys lie beyond it ({[2^31] = 1}, {1, 2, [5] = 5}), the largest of them, so no element
/// is dropped silently; holes become null and a too sparse array fails as without array_mt.
/// Other keys are ignored, as cjson does. The common case (nothing beyond the border) costs one
/// lua_next from the border.
static lua_Integer array_mt_length(Encoder *e, int idx, PathSeg *path) {
    lua_State *L = e->L;
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len > 0) lua_pushinteger(L, len); // t[len] is not nil: a valid key for lua_next
    else lua_pushnil(L);
    if (!lua_next(L, idx)) return len;
    lua_pop(L, 2);
    lua_Integer count = 0, max = len;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1)) continue;
        lua_Integer k = lua_tointeger(L, -1);
        if (k < 1) continue;
        count++;
        if (k > max) max = k;
    }
    if (max > 10 && max - count > count) // max > 2 * count, without overflow
        encode_fail(e, path, "excessively sparse array");
    return max;
}

/// Appends the table at idx (depth = its nesting level, the root table being 1).
static void encode_table(Encoder *e, int idx, PathSeg *path, int depth) {
    lua_State *L = e->L;
    const void *self = lua_topointer(L, idx);
    lua_Integer len = 0;
    for (PathSeg *s = path; s; s = s->up)
        if (s->container == self) encode_fail(e, path, "cycle");
    if (depth > e->max_depth) encode_fail(e, path, "nesting deeper than %d", e->max_depth);
    luaL_checkstack(L, 8, "json.encode: nesting too deep");
    if (has_array_mt(e, idx)) {
        encode_array(e, idx, array_mt_length(e, idx, path), path, depth);
        return;
    }
    switch (table_shape(e, idx, path, &len)) {
    case SHAPE_EMPTY: jbuf_add(L, e->buf, "{}", 2); break;
    case SHAPE_ARRAY: encode_array(e, idx, len, path, depth); break;
    default:
        if (e->sort_keys) encode_sorted_object(e, idx, path, depth);
        else encode_object(e, idx, path, depth);
    }
}

/// Appends the value at the absolute stack index idx; depth = nesting level of its container.
static void encode_value(Encoder *e, int idx, PathSeg *path, int depth) {
    lua_State *L = e->L;
    int t = lua_type(L, idx);
    switch (t) {
    case LUA_TNIL: jbuf_add(L, e->buf, "null", 4); break;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, idx)) jbuf_add(L, e->buf, "true", 4);
        else jbuf_add(L, e->buf, "false", 5);
        break;
    case LUA_TNUMBER: encode_number(e, idx, path); break;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        encode_string(e, s, len);
        break;
    }
    case LUA_TTABLE: encode_table(e, idx, path, depth + 1); break;
    case LUA_TLIGHTUSERDATA: {
        void *p = lua_touserdata(L, idx);
        if (p == NULL) jbuf_add(L, e->buf, "null", 4);
        else if (p == &EMPTY_ARRAY) jbuf_add(L, e->buf, "[]", 2);
        else encode_fail(e, path, "cannot encode lightuserdata");
        break;
    }
    default: encode_fail(e, path, "cannot encode %s", lua_typename(L, t));
    }
}

// ---- Options -----------------------------------------------------------------------------------

/// opts.max_depth (arg 2), checked against 1..JSON_DEPTH_CEILING; default when absent.
static int opt_max_depth(lua_State *L) {
    int depth = JSON_DEFAULT_DEPTH;
    if (lua_isnoneornil(L, 2)) return depth;
    if (lua_getfield(L, 2, "max_depth") != LUA_TNIL) {
        if (!lua_isinteger(L, -1)) luaL_argerror(L, 2, "max_depth must be an integer");
        lua_Integer v = lua_tointeger(L, -1);
        if (v < 1 || v > JSON_DEPTH_CEILING)
            luaL_argerror(L, 2, lua_pushfstring(L, "max_depth must be 1..%d", JSON_DEPTH_CEILING));
        depth = (int)v;
    }
    lua_pop(L, 1);
    return depth;
}

static int opt_boolean(lua_State *L, const char *name) {
    if (lua_isnoneornil(L, 2)) return 0;
    lua_getfield(L, 2, name);
    int on = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return on;
}

// ---- json.encode ---------------------------------------------------------------------------------

/// json.encode(value [, opts]); upvalue 1 = array_mt.
static int json_encode(lua_State *L) {
    Encoder e;
    JBuf buf;
    luaL_checkany(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    e.L = L;
    e.max_depth = opt_max_depth(L);
    e.sort_keys = opt_boolean(L, "sort_keys");
    e.indent = NULL;
    e.indent_len = 0;
    if (lua_isnil(L, 2)) lua_pushnil(L);
    else lua_getfield(L, 2, "indent"); // stays at index 3 while encoding
    if (!lua_isnil(L, 3)) {
        if (lua_type(L, 3) != LUA_TSTRING) luaL_argerror(L, 2, "indent must be a string");
        e.indent = lua_tolstring(L, 3, &e.indent_len);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    e.array_mt = 4;
    jbuf_init(L, &buf); // index 5
    e.buf = &buf;
    encode_value(&e, 1, NULL, 0);
    lua_pushlstring(L, buf.data, buf.len);
    return 1;
}

// ---- Decoder -------------------------------------------------------------------------------------

typedef struct Decoder {
    lua_State *L;
    const char *start, *end;   ///< input; *end is the '\0' Lua keeps after every string
    int depth, max_depth;
    int luanil;                ///< null → nil instead of json.null
    int array_mt;              ///< stack index of json.array_mt
    size_t *err_offset;        ///< where the safe variant wants the error offset (or NULL)
    int hint_obj[HINT_LEVELS]; ///< size of the last object seen at each depth
    int hint_arr[HINT_LEVELS]; ///< length of the last array seen at each depth
} Decoder;

/// Raises "json.decode: <fmt...> at byte <offset of at>".
NOINLINE static void decode_fail(Decoder *d, const char *at, const char *fmt, ...) {
    lua_State *L = d->L;
    size_t offset = (size_t)(at - d->start) + 1;
    va_list ap;
    if (d->err_offset) *d->err_offset = offset;
    va_start(ap, fmt);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_pushfstring(L, "json.decode: %s at byte %I", lua_tostring(L, -1), (lua_Integer)offset);
    lua_error(L);
}

/// Raises for the byte at `at` that cannot start or continue what is being parsed.
NOINLINE static void decode_unexpected(Decoder *d, const char *at) {
    unsigned char c = (unsigned char)*at;
    char hex[8];
    if (at >= d->end) decode_fail(d, d->end, "unexpected end of input");
    if (c >= 0x20 && c < 0x7f) decode_fail(d, at, "unexpected character '%c'", c);
    snprintf(hex, sizeof hex, "0x%02X", c);
    decode_fail(d, at, "unexpected byte %s", hex);
}

static inline const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

static int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/// The 4 hex digits at p as a number, or -1. Stops at the first non-digit (so never reads past
/// the terminating '\0').
static long hex4(const char *p) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value((unsigned char)p[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/// Writes code point cp as UTF-8 (lone surrogates too, as 3 bytes); returns the length.
static int put_utf8(char *out, long cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/// Decodes the \u escape at p (p[0] = '\', p[1] = 'u') into out; returns the input length used
/// (6, or 12 for a surrogate pair) and sets *written.
static int decode_u_escape(Decoder *d, const char *p, char *out, int *written) {
    long cp = hex4(p + 2);
    if (cp < 0) decode_fail(d, p, "invalid \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF && p[6] == '\\' && p[7] == 'u') {
        long lo = hex4(p + 8);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            *written = put_utf8(out, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
            return 12;
        }
    }
    *written = put_utf8(out, cp);
    return 6;
}

/// The byte a one-letter escape stands for (the letter after '\'), or -1.
static int simple_escape(char c) {
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return -1;
    }
}

/// Slow path for a string with escapes: s = first content byte, p = first backslash.
/// Output is never longer than the input span, so one buffer of that size is enough.
NOINLINE static const char *decode_escaped_string(Decoder *d, const char *s, const char *p) {
    luaL_Buffer b;
    const char *q = p;
    while (q < d->end && *q != '"') q += (*q == '\\') ? 2 : 1;
    size_t span = (size_t)((q < d->end ? q : d->end) - s);
    char *out = luaL_buffinitsize(d->L, &b, span);
    size_t n = (size_t)(p - s);
    memcpy(out, s, n);
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') break;
        if (c == '\\') {
            int e = simple_escape(p[1]);
            if (e >= 0) {
                out[n++] = (char)e;
                p += 2;
            } else if (p[1] == 'u') {
                int w;
                p += decode_u_escape(d, p, out + n, &w);
                n += (size_t)w;
            } else if (p + 1 >= d->end) {
                decode_fail(d, d->end, "unexpected end of input");
            } else {
                decode_fail(d, p, "invalid escape");
            }
        } else if (c < 0x20) {
            if (p >= d->end) decode_fail(d, d->end, "unexpected end of input");
            decode_fail(d, p, "control character in string");
        } else {
            out[n++] = (char)c;
            p++;
        }
    }
    luaL_pushresultsize(&b, n);
    return p + 1;
}

/// Pushes the string starting at the '"' at p; returns the position after the closing quote.
static const char *decode_string(Decoder *d, const char *p) {
    const char *s = ++p;
    while (!SPECIAL[(unsigned char)*p]) p++;
    if (*p == '"') {
        lua_pushlstring(d->L, s, (size_t)(p - s));
        return p + 1;
    }
    if (*p == '\\') return decode_escaped_string(d, s, p);
    if (p >= d->end) decode_fail(d, d->end, "unexpected end of input");
    decode_fail(d, p, "control character in string");
    return NULL;
}

/// Accumulates decimal digits [p, end) into *mant and counts the significant ones (from the
/// first non-zero digit on) in *nsig. Leading zeros change nothing; once nsig passes 19 the
/// count stops at 20 ("too many for the fast path") and mant is no longer used.
static void add_digits(const char *p, const char *end, uint64_t *mant, int *nsig) {
    for (; p < end && *nsig <= 19; p++) {
        if (*nsig == 0 && *p == '0') continue;
        *mant = *mant * 10 + (uint64_t)(*p - '0');
        (*nsig)++;
    }
}

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

/// Pushes the float written in [start, end) (fraction and/or exponent, or a big integer).
static void push_float(Decoder *d, const char *start, const char *end, const char *int_end,
                       const char *frac, const char *frac_end, const char *exp) {
    uint64_t mant = 0;
    int nsig = 0, neg = (*start == '-');
    long e = 0;
    int huge_exp = 0; // the exponent has more digits than e keeps: only strtod can tell
    double v;
    add_digits(start + neg, int_end, &mant, &nsig);
    if (frac) add_digits(frac, frac_end, &mant, &nsig);
    if (exp) {
        int eneg = (*exp == '-');
        for (const char *q = exp + (*exp == '-' || *exp == '+'); q < end; q++) {
            if (e < 100000) e = e * 10 + (*q - '0');
            else huge_exp = 1;
        }
        if (eneg) e = -e;
    }
    if (!huge_exp && fast_float(mant, nsig, e - (frac ? (long)(frac_end - frac) : 0), &v)) {
        lua_pushnumber(d->L, neg ? -v : v);
        return;
    }
    lua_pushlstring(d->L, start, (size_t)(end - start)); // a '\0'-terminated copy for strtod
    v = c_strtod(lua_tostring(d->L, -1));
    lua_pop(d->L, 1);
    lua_pushnumber(d->L, v);
}

/// Pushes the integer in [start, end) (no fraction or exponent); floats if beyond int64.
static void push_integer(Decoder *d, const char *start, const char *end) {
    int neg = (*start == '-');
    const char *digits = start + neg;
    size_t n = (size_t)(end - digits);
    uint64_t u = 0;
    if (n > 19) {
        push_float(d, start, end, end, NULL, NULL, NULL);
        return;
    }
    for (const char *q = digits; q < end; q++) u = u * 10 + (uint64_t)(*q - '0');
    if (u > (uint64_t)INT64_MAX + (uint64_t)neg) { // 19 digits fit in uint64, maybe not int64
        push_float(d, start, end, end, NULL, NULL, NULL);
        return;
    }
    if (neg) lua_pushinteger(d->L, u == (uint64_t)INT64_MAX + 1 ? LUA_MININTEGER : -(lua_Integer)u);
    else lua_pushinteger(d->L, (lua_Integer)u);
}

/// Validates the number at p against the JSON grammar and pushes it; returns the end.
NOINLINE static const char *decode_number(Decoder *d, const char *p) {
    const char *start = p, *digits, *frac = NULL, *frac_end = NULL, *exp = NULL;
    if (*p == '-') p++;
    digits = p;
    while (is_digit(*p)) p++;
    if (p == digits || (*digits == '0' && p - digits > 1)) decode_fail(d, start, "invalid number");
    const char *int_end = p;
    if (*p == '.') {
        frac = ++p;
        while (is_digit(*p)) p++;
        if (p == frac) decode_fail(d, start, "invalid number");
        frac_end = p;
    }
    if (*p == 'e' || *p == 'E') {
        exp = ++p;
        if (*p == '+' || *p == '-') p++;
        const char *edigits = p;
        while (is_digit(*p)) p++;
        if (p == edigits) decode_fail(d, start, "invalid number");
    }
    unsigned char c = (unsigned char)*p; // "1.2.3", "0x1", "1e5e": not a number
    if (c == '.' || c == '+' || c == '-' || c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
        decode_fail(d, start, "invalid number");
    if (!frac && !exp) push_integer(d, start, p);
    else push_float(d, start, p, int_end, frac, frac_end, exp);
    return p;
}

/// Checks that the literal `word` is at p; returns the position after it.
static const char *expect_literal(Decoder *d, const char *p, const char *word, size_t len) {
    for (size_t i = 0; i < len; i++) // stops at the first mismatch: never reads past '\0'
        if (p[i] != word[i]) decode_unexpected(d, p + i);
    return p + len;
}

static const char *decode_value(Decoder *d, const char *p);

/// Enters a container at p (checks depth and Lua stack); returns the hint slot for its level.
static int enter(Decoder *d, const char *p) {
    if (++d->depth > d->max_depth) decode_fail(d, p, "nesting deeper than %d", d->max_depth);
    luaL_checkstack(d->L, 4, "json.decode: nesting too deep");
    return d->depth < HINT_LEVELS ? d->depth : 0;
}

static inline int capped(lua_Integer n) { return n < HINT_CAP ? (int)n : HINT_CAP; }

/// Pushes the array at p ('['); every array gets array_mt. Returns the position after ']'.
static const char *decode_array(Decoder *d, const char *p) {
    lua_State *L = d->L;
    int level = enter(d, p);
    lua_Integer n = 0;
    lua_createtable(L, level ? d->hint_arr[level] : 0, 0);
    lua_pushvalue(L, d->array_mt);
    lua_setmetatable(L, -2);
    p = skip_ws(p + 1);
    if (*p != ']') {
        for (;;) {
            p = decode_value(d, p);
            lua_rawseti(L, -2, ++n); // a nil (luanil) leaves a hole
            p = skip_ws(p);
            if (*p == ',') p++;
            else if (*p == ']') break;
            else decode_unexpected(d, p);
        }
    }
    if (level) d->hint_arr[level] = capped(n);
    d->depth--;
    return p + 1;
}

/// Pushes the object at p ('{'); returns the position after '}'.
static const char *decode_object(Decoder *d, const char *p) {
    lua_State *L = d->L;
    int level = enter(d, p);
    lua_Integer n = 0;
    lua_createtable(L, 0, level ? d->hint_obj[level] : 0);
    p = skip_ws(p + 1);
    if (*p != '}') {
        for (;;) {
            if (*p != '"') decode_unexpected(d, p);
            p = skip_ws(decode_string(d, p));
            if (*p != ':') decode_unexpected(d, p);
            p = decode_value(d, p + 1);
            lua_rawset(L, -3); // last duplicate wins; nil (luanil) removes the key
            n++;
            p = skip_ws(p);
            if (*p == ',') p = skip_ws(p + 1);
            else if (*p == '}') break;
            else decode_unexpected(d, p);
        }
    }
    if (level) d->hint_obj[level] = capped(n);
    d->depth--;
    return p + 1;
}

/// Pushes the value at p (after optional whitespace); returns the position after it.
static const char *decode_value(Decoder *d, const char *p) {
    p = skip_ws(p);
    switch (*p) {
    case '"': return decode_string(d, p);
    case '{': return decode_object(d, p);
    case '[': return decode_array(d, p);
    case 't': lua_pushboolean(d->L, 1); return expect_literal(d, p, "true", 4);
    case 'f': lua_pushboolean(d->L, 0); return expect_literal(d, p, "false", 5);
    case 'n':
        if (d->luanil) lua_pushnil(d->L);
        else lua_pushlightuserdata(d->L, NULL);
        return expect_literal(d, p, "null", 4);
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return decode_number(d, p);
    default: decode_unexpected(d, p); return NULL;
    }
}

/// decode(string, opts) with array_mt at stack index mt_idx. err_offset: see Decoder.
static int decode_with(lua_State *L, int mt_idx, size_t *err_offset) {
    Decoder d;
    size_t len;
    luaL_checktype(L, 1, LUA_TSTRING);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    memset(&d, 0, sizeof d);
    d.L = L;
    d.start = lua_tolstring(L, 1, &len);
    d.end = d.start + len;
    d.max_depth = opt_max_depth(L);
    d.luanil = opt_boolean(L, "luanil");
    d.array_mt = mt_idx;
    d.err_offset = err_offset;
    const char *p = d.start;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3; // UTF-8 byte order mark
    p = skip_ws(decode_value(&d, p));
    if (p != d.end) decode_fail(&d, p, "trailing garbage");
    return 1;
}

/// json.decode(string [, opts]); upvalue 1 = array_mt.
static int json_decode(lua_State *L) {
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    return decode_with(L, 3, NULL);
}

// ---- Safe variants -------------------------------------------------------------------------------

/// Internal: (string, opts, array_mt, offset box) → value; the box receives the error offset.
static int decode_protected(lua_State *L) {
    lua_settop(L, 4);
    size_t *box = lua_touserdata(L, 4);
    if (box && lua_rawlen(L, 4) < sizeof(size_t)) box = NULL;
    return decode_with(L, 3, box);
}

/// Turns the error value on top into `nil, {code, message, retryable [, offset]}`.
static int push_safe_error(lua_State *L, int errmt, size_t offset) {
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "json: unknown error";
    lua_createtable(L, 0, 4);
    lua_pushliteral(L, "json");
    lua_setfield(L, -2, "code");
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "message");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "retryable");
    if (offset) {
        lua_pushinteger(L, (lua_Integer)offset);
        lua_setfield(L, -2, "offset");
    }
    lua_pushvalue(L, errmt);
    lua_setmetatable(L, -2);
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

/// json.safe.decode(string [, opts]); upvalues: array_mt, error metatable.
static int json_safe_decode(lua_State *L) {
    lua_settop(L, 2);
    size_t *offset = lua_newuserdatauv(L, sizeof(size_t), 0); // index 3: kept past the pcall
    *offset = 0;
    lua_pushcfunction(L, decode_protected);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 3);
    if (lua_pcall(L, 4, 1, 0) == LUA_OK) return 1;
    return push_safe_error(L, lua_upvalueindex(2), *offset);
}

/// json.safe.encode(value [, opts]); upvalues: json.encode, error metatable.
static int json_safe_encode(lua_State *L) {
    int nargs = lua_gettop(L) < 2 ? lua_gettop(L) : 2; // keep "no value" an error
    lua_settop(L, nargs);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    if (lua_pcall(L, nargs, 1, 0) == LUA_OK) return 1;
    return push_safe_error(L, lua_upvalueindex(2), 0);
}

/// __tostring of safe errors: the message.
static int error_tostring(lua_State *L) {
    lua_getfield(L, 1, "message");
    if (!lua_isstring(L, -1)) lua_pushliteral(L, "json error");
    return 1;
}

// ---- Module --------------------------------------------------------------------------------------

/// Pushes the state's array_mt (registry[LOOKOUT_JSON_ARRAY_MT_KEY]), creating it once.
static void push_array_mt(lua_State *L) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, LOOKOUT_JSON_ARRAY_MT_KEY) == LUA_TTABLE) return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LOOKOUT_JSON_ARRAY_MT_KEY);
}

int luaopen_lookout_json(lua_State *L) {
    pthread_once(&c_locale_once, c_locale_init);

    lua_createtable(L, 0, 8); // the module
    push_array_mt(L);
    int mt = lua_gettop(L);
    lua_pushvalue(L, mt);
    lua_setfield(L, -3, "array_mt");
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -3, "null");
    lua_pushlightuserdata(L, &EMPTY_ARRAY);
    lua_setfield(L, -3, "empty_array");

    lua_pushvalue(L, mt);
    lua_pushcclosure(L, json_encode, 1);
    int encode = lua_gettop(L);
    lua_pushvalue(L, encode);
    lua_setfield(L, -4, "encode");
    lua_pushvalue(L, mt);
    lua_pushcclosure(L, json_decode, 1);
    lua_setfield(L, -4, "decode");

    lua_createtable(L, 0, 1); // metatable of safe errors
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    int errmt = lua_gettop(L);

    lua_createtable(L, 0, 2); // json.safe
    lua_pushvalue(L, encode);
    lua_pushvalue(L, errmt);
    lua_pushcclosure(L, json_safe_encode, 2);
    lua_setfield(L, -2, "encode");
    lua_pushvalue(L, mt);
    lua_pushvalue(L, errmt);
    lua_pushcclosure(L, json_safe_decode, 2);
    lua_setfield(L, -2, "decode");
    lua_setfield(L, mt - 1, "safe");

    lua_settop(L, mt - 1);
    return 1;
}
