// Fuzz/json_cjson.c — differential harness for Sources/LuaShim/json.c against two references:
// an independent strict RFC 8259 validator (below) and lua-cjson 2.1 (Debian's lua-cjson, loaded
// with require "cjson" into the same Lua state), plus the C library's strtoll/strtod per number.
//
// Input: the JSON text. Checks:
//   - json.decode accepts exactly the texts the validator accepts (with max_depth 64 for both;
//     a leading UTF-8 byte order mark is skipped, as json.c documents);
//   - for an accepted text without lone surrogate escapes (cjson rejects those; json.c keeps
//     them as 3-byte sequences), cjson accepts it too and both trees are equal: same shape,
//     strings byte for byte, null as json.null/cjson.null, and numbers equal (cjson returns
//     floats: json.c's integers must convert to exactly cjson's float, its floats must have
//     the same bits);
//   - every number token of an accepted text decodes on its own to the exact value: an integer
//     equal to strtoll's when it has no fraction or exponent and fits int64, otherwise a float
//     with the bits of strtod's correctly rounded result.
#include "lua_fuzz.h"
#include "shim_json.h"

#include <errno.h>

enum { MAX_DEPTH = 64, MAX_TOKENS = 16 };

// ---- The reference validator ----------------------------------------------------------------

typedef struct Validator {
    const char *p, *end;
    int depth;
    int lone_surrogate; ///< a \uD800-\uDFFF escape that is not part of a high+low pair
    int ntokens;
    const char *token[MAX_TOKENS];
    size_t token_len[MAX_TOKENS];
} Validator;

static void v_ws(Validator *v) {
    while (v->p < v->end && (*v->p == ' ' || *v->p == '\t' || *v->p == '\n' || *v->p == '\r'))
        v->p++;
}

static int v_digit(Validator *v) { return v->p < v->end && *v->p >= '0' && *v->p <= '9'; }

static int v_number(Validator *v) {
    const char *start = v->p;
    if (v->p < v->end && *v->p == '-') v->p++;
    if (!v_digit(v)) return 0;
    if (*v->p == '0') v->p++;
    else while (v_digit(v)) v->p++;
    if (v->p < v->end && *v->p == '.') {
        v->p++;
        if (!v_digit(v)) return 0;
        while (v_digit(v)) v->p++;
    }
    if (v->p < v->end && (*v->p == 'e' || *v->p == 'E')) {
        v->p++;
        if (v->p < v->end && (*v->p == '+' || *v->p == '-')) v->p++;
        if (!v_digit(v)) return 0;
        while (v_digit(v)) v->p++;
    }
    if (v->ntokens < MAX_TOKENS) {
        v->token[v->ntokens] = start;
        v->token_len[v->ntokens++] = (size_t)(v->p - start);
    }
    return 1;
}

static long v_hex4(const char *p, const char *end) {
    long x = 0;
    if (end - p < 4) return -1;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (h < 0) return -1;
        x = x * 16 + h;
    }
    return x;
}

static int v_string(Validator *v) {
    v->p++; // '"'
    while (v->p < v->end) {
        unsigned char c = (unsigned char)*v->p;
        if (c == '"') {
            v->p++;
            return 1;
        }
        if (c < 0x20) return 0;
        if (c != '\\') {
            v->p++;
            continue;
        }
        if (v->end - v->p < 2) return 0;
        char e = v->p[1];
        if (e == 'u') {
            long cp = v_hex4(v->p + 2, v->end);
            if (cp < 0) return 0;
            v->p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF && v->end - v->p >= 6 && v->p[0] == '\\' &&
                v->p[1] == 'u') {
                long lo = v_hex4(v->p + 2, v->end);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    v->p += 6;
                    continue;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) v->lone_surrogate = 1;
        } else if (strchr("\"\\/bfnrt", e) && e != '\0') {
            v->p += 2;
        } else {
            return 0;
        }
    }
    return 0;
}

static int v_value(Validator *v);

static int v_container(Validator *v, char close) {
    if (++v->depth > MAX_DEPTH) return 0;
    v->p++;
    v_ws(v);
    if (v->p < v->end && *v->p == close) {
        v->p++;
        v->depth--;
        return 1;
    }
    for (;;) {
        v_ws(v);
        if (close == '}') {
            if (v->p >= v->end || *v->p != '"' || !v_string(v)) return 0;
            v_ws(v);
            if (v->p >= v->end || *v->p != ':') return 0;
            v->p++;
        }
        if (!v_value(v)) return 0;
        v_ws(v);
        if (v->p >= v->end) return 0;
        if (*v->p == ',') {
            v->p++;
            continue;
        }
        if (*v->p != close) return 0;
        v->p++;
        v->depth--;
        return 1;
    }
}

static int v_literal(Validator *v, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(v->end - v->p) < n || memcmp(v->p, word, n) != 0) return 0;
    v->p += n;
    return 1;
}

static int v_value(Validator *v) {
    v_ws(v);
    if (v->p >= v->end) return 0;
    switch (*v->p) {
    case '{': return v_container(v, '}');
    case '[': return v_container(v, ']');
    case '"': return v_string(v);
    case 't': return v_literal(v, "true");
    case 'f': return v_literal(v, "false");
    case 'n': return v_literal(v, "null");
    default: return v_number(v);
    }
}

/// Validates [text, text+len) (after an optional BOM, which *skip receives).
static int validate(Validator *v, const char *text, size_t len, size_t *skip) {
    memset(v, 0, sizeof *v);
    *skip = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    v->p = text + *skip;
    v->end = text + len;
    if (!v_value(v)) return 0;
    v_ws(v);
    return v->p == v->end;
}

// ---- Comparison with cjson ---------------------------------------------------------------------

/// json.c's value at a against cjson's at b (see the header comment for the number rule).
static int same_as_cjson(lua_State *L, int a, int b) { return fuzz_same_numbers(L, a, b, 0, 1); }

// ---- Harness ---------------------------------------------------------------------------------------

static lua_State *L;

static void setup(void) {
    L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "json", luaopen_lookout_json, 1);
    lua_pop(L, 1);
    if (luaL_dostring(L, "cjson = require 'cjson'\n"
                         "cjson.decode_max_depth(" "64" ")\n"
                         "cjson.decode_invalid_numbers(false)\n"
                         "opts = {max_depth = 64}\n") != LUA_OK) {
        fprintf(stderr, "cannot load lua-cjson (apt-get install lua-cjson): %s\n",
                lua_tostring(L, -1));
        exit(2);
    }
    lua_settop(L, 0);
}

/// pcall(module.decode, text [, opts]); pushes the result or the error.
static int decode_with(const char *module, const char *text, size_t len, int with_opts) {
    lua_getglobal(L, module);
    lua_getfield(L, -1, "decode");
    lua_remove(L, -2);
    lua_pushlstring(L, text, len);
    if (with_opts) lua_getglobal(L, "opts");
    return lua_pcall(L, with_opts ? 2 : 1, 1, 0);
}

/// The exact value of one number token, by the C library.
static void check_token(const char *token, size_t n) {
    char buf[512];
    if (n >= sizeof buf) return;
    memcpy(buf, token, n);
    buf[n] = '\0';
    int status = decode_with("json", buf, n, 0);
    fuzz_check(status == LUA_OK, "number %s rejected: %s", buf, lua_tostring(L, -1));
    errno = 0;
    long long i = strtoll(buf, NULL, 10);
    if (!strpbrk(buf, ".eE") && errno == 0) {
        fuzz_check(lua_isinteger(L, -1) && lua_tointeger(L, -1) == i, "%s decoded as %.17g", buf,
                   lua_tonumber(L, -1));
    } else {
        double d = strtod(buf, NULL);
        fuzz_check(!lua_isinteger(L, -1) && fuzz_bits(lua_tonumber(L, -1)) == fuzz_bits(d),
                   "%s decoded as %.17g (%s), strtod says %.17g", buf, lua_tonumber(L, -1),
                   lua_isinteger(L, -1) ? "integer" : "float", d);
    }
    lua_pop(L, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!L) setup();
    const char *text = (const char *)data;
    Validator v;
    size_t skip;
    int valid = validate(&v, text, size, &skip);
    int status = decode_with("json", text, size, 1); // 1
    int ours = status == LUA_OK;
    if (ours != valid) fuzz_show("input", text, size);
    fuzz_check(ours == valid, "json.decode %s, the validator %s (%s)", ours ? "accepts" : "rejects",
               valid ? "accepts" : "rejects", ours ? "" : lua_tostring(L, 1));
    if (valid) {
        for (int i = 0; i < v.ntokens; i++) check_token(v.token[i], v.token_len[i]);
        if (!v.lone_surrogate) {
            status = decode_with("cjson", text + skip, size - skip, 0); // 2
            if (status != LUA_OK || !same_as_cjson(L, 1, 2)) fuzz_show("input", text, size);
            fuzz_check(status == LUA_OK, "cjson rejects: %s", lua_tostring(L, 2));
            fuzz_check(same_as_cjson(L, 1, 2), "json.decode and cjson.decode differ");
        }
    }
    fuzz_done(&L);
    return 0;
}
