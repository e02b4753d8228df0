-- Tests for lookout._repl: pretty-printer, results formatting and tab completion.
local repl = require "lookout._repl"

local T = {}

-- assert that actual == expected, showing both (multi-line values on their own lines)
local function eq(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s\nexpected:\n%s\nactual:\n%s", what or "mismatch",
                        tostring(expected), tostring(actual)), 2)
  end
end

local function pretty(v, opts) return repl.pretty(v, opts) end

-- list equality for completion candidates
local function same_list(actual, expected, what)
  eq(table.concat(actual, " | "), table.concat(expected, " | "), what)
end

---------------------------------------------------------------------------------------------
-- pretty: atoms
---------------------------------------------------------------------------------------------

function T.test_pretty_numbers()
  eq(pretty(42), "42", "integer")
  eq(pretty(-7), "-7", "negative integer")
  eq(pretty(math.mininteger), "-9223372036854775808", "min integer")
  eq(pretty(1.0), "1.0", "float that looks integral keeps .0")
  eq(pretty(-0.0), "-0.0", "negative zero")
  eq(pretty(1.5), "1.5", "float")
  eq(pretty(1e300), "1e+300", "large float")
  eq(pretty(2^53), "9007199254740992.0", "2^53 as float")
  eq(pretty(0.1 + 0.2), "0.30000000000000004", "floats read back exactly")
  eq(pretty(0.1), "0.1", "short float stays short")
  eq(pretty(0/0), "nan", "nan")
  eq(pretty(-(0/0)), "nan", "negative nan")
  eq(pretty(1/0), "inf", "inf")
  eq(pretty(-1/0), "-inf", "-inf")
end

function T.test_pretty_nil_and_booleans()
  eq(pretty(nil), "nil", "nil")
  eq(pretty(true), "true", "true")
  eq(pretty(false), "false", "false")
end

function T.test_pretty_strings()
  eq(pretty("hello"), '"hello"', "plain")
  eq(pretty(""), '""', "empty")
  eq(pretty('say "hi"'), '"say \\"hi\\""', "double quotes escaped")
  eq(pretty("it's"), [["it's"]], "single quote kept")
  eq(pretty("a\\b"), [["a\\b"]], "backslash")
  eq(pretty("line1\nline2\ttab\r"), [["line1\nline2\ttab\r"]], "named escapes")
  eq(pretty("\27[1m"), [["\27[1m"]], "escape character in decimal")
  eq(pretty("\0" .. "1"), [["\0001"]], "decimal escape padded before a digit")
  eq(pretty("\1x\127"), [["\1x\127"]], "controls and DEL")
  eq(pretty("\a\b\f\v"), [["\a\b\f\v"]], "other named escapes")
end

function T.test_pretty_utf8()
  eq(pretty("héllo wörld €"), '"héllo wörld €"', "printable UTF-8 kept")
  eq(pretty("🙂"), '"🙂"', "4-byte UTF-8 kept")
  eq(pretty("\x80"), [["\x80"]], "lone continuation byte")
  eq(pretty("a\xFFb"), [["a\xFFb"]], "invalid byte")
  eq(pretty("\xC3"), [["\xC3"]], "truncated sequence")
  eq(pretty("\xE2\x82"), [["\xE2\x82"]], "truncated 3-byte sequence")
  eq(pretty("\xC0\x80"), [["\xC0\x80"]], "overlong encoding")
  eq(pretty("\xED\xA0\x80"), [["\xED\xA0\x80"]], "UTF-16 surrogate")
  eq(pretty("\xF4\x90\x80\x80"), [["\xF4\x90\x80\x80"]], "beyond U+10FFFF")
  eq(pretty("\u{85}"), [["\u{85}"]], "C1 control escaped")
  -- what is shown reads back as the same bytes
  local s = "é\x80\0\n\27\u{85}\xFF\"\\9"
  eq(load("return " .. pretty(s))(), s, "round trip")
end

function T.test_pretty_string_max()
  eq(pretty("abcdefghij", { string_max = 4 }), '"abcd"… (6 more bytes)', "cut")
  eq(pretty("abcd", { string_max = 4 }), '"abcd"', "exactly the limit")
  eq(pretty("ééé", { string_max = 3 }), '"é"… (4 more bytes)', "cut at a character boundary")
  eq(pretty(string.rep("x", 2001)), '"' .. string.rep("x", 2000) .. '"… (1 more bytes)',
     "default limit is 2000 bytes")
end

function T.test_pretty_opaque_values()
  local f = function() end
  eq(pretty(f), tostring(f), "function via tostring")
  local co = coroutine.create(f)
  eq(pretty(co), tostring(co), "thread via tostring")
  eq(pretty(print), tostring(print), "builtin function via tostring")
  local seen
  local opts = { tostring = function(v) seen = v; return "<fn>" end }
  eq(pretty(f, opts), "<fn>", "opts.tostring used")
  eq(seen, f, "opts.tostring got the value")
  eq(pretty({ f }, opts), "{ <fn> }", "opts.tostring used inside tables")
  opts.tostring = function() error("boom") end
  eq(pretty(f, opts), tostring(f), "a failing opts.tostring falls back")
end

---------------------------------------------------------------------------------------------
-- pretty: tables
---------------------------------------------------------------------------------------------

function T.test_pretty_arrays()
  eq(pretty({}), "{}", "empty")
  eq(pretty({ 1, 2, 3 }), "{ 1, 2, 3 }", "array")
  eq(pretty({ "a", true, 1.5 }), '{ "a", true, 1.5 }', "mixed array")
  eq(pretty({ 1, nil, 3 }), "{ 1, [3] = 3 }", "hole ends the array part")
  eq(pretty({ [2] = "b" }), '{ [2] = "b" }', "no element 1")
end

function T.test_pretty_records()
  eq(pretty({ a = 1, ["b c"] = 2, [true] = 3 }), '{ a = 1, ["b c"] = 2, [true] = 3 }',
     "example from the brief")
  eq(pretty({ ["end"] = 1, _x = 2, x1 = 3, ["1x"] = 4 }),
     '{ ["1x"] = 4, _x = 2, ["end"] = 1, x1 = 3 }', "keywords and non-identifiers bracketed")
  eq(pretty({ ["é"] = 1, ["a\n"] = 2 }), '{ ["a\\n"] = 2, ["é"] = 1 }', "escaped keys")
end

function T.test_pretty_key_order()
  local f = function() end
  local t = { "one", "two", [10] = "ten", [-1] = "neg", [2.5] = "f", b = 1, B = 2, a = 3,
              [false] = "F", [true] = "T", [f] = "fn", [{}] = "tbl" }
  local expected = '{ "one", "two", [-1] = "neg", [2.5] = "f", [10] = "ten", B = 2, a = 3, '
    .. 'b = 1, [false] = "F", [true] = "T", [' .. tostring(f) .. '] = "fn", [{}] = "tbl" }'
  eq(pretty(t, { width = 1000 }), expected, "array, numbers, strings (bytewise), booleans, others")
end

function T.test_pretty_nested_multiline()
  local t = {
    name = "home",
    url = "https://ns.example.org",
    entries = { { sgv = 120, direction = "Flat" }, { sgv = 118, direction = "FortyFiveDown" } },
    tags = { "a", "b" },
  }
  eq(pretty(t), [[
{
  entries = {
    { direction = "Flat", sgv = 120 },
    { direction = "FortyFiveDown", sgv = 118 },
  },
  name = "home",
  tags = { "a", "b" },
  url = "https://ns.example.org",
}]], "nested table over 80 columns")
  eq(pretty(t, { width = 200 }),
     '{ entries = { { direction = "Flat", sgv = 120 }, '
     .. '{ direction = "FortyFiveDown", sgv = 118 } }, '
     .. 'name = "home", tags = { "a", "b" }, url = "https://ns.example.org" }',
     "fits on one line with a wide width")
  eq(pretty(t, { width = 40, indent = "    " }), [[
{
    entries = {
        {
            direction = "Flat",
            sgv = 120,
        },
        {
            direction = "FortyFiveDown",
            sgv = 118,
        },
    },
    name = "home",
    tags = { "a", "b" },
    url = "https://ns.example.org",
}]], "narrow width and a four-space indent")
end

function T.test_pretty_width_boundary()
  local t = { string.rep("x", 74) } -- { "xxx…" } is exactly 80 columns
  eq(pretty(t), '{ "' .. string.rep("x", 74) .. '" }', "80 columns fit")
  t = { string.rep("x", 75) }
  eq(pretty(t), '{\n  "' .. string.rep("x", 75) .. '",\n}', "81 columns do not")
  eq(pretty({ "é" }, { width = 7 }), '{ "é" }', "width counts characters, not bytes")
end

function T.test_pretty_cycles_and_shared()
  local t = { name = "root" }
  t.self = t
  eq(pretty(t), '{ name = "root", self = <cycle> }', "direct cycle")
  local a, b = {}, {}
  a.b, b.a = b, a
  eq(pretty(a), "{ b = { a = <cycle> } }", "indirect cycle")
  local shared = { 1 }
  eq(pretty({ x = shared, y = shared }), "{ x = { 1 }, y = { 1 } }", "shared table printed twice")
  local k = { 1 }
  k[k] = true
  eq(pretty(k), "{ 1, [<cycle>] = true }", "cycle through a key")
end

function T.test_pretty_depth()
  local t = { a = { b = { c = { d = { e = { f = {} } } } } } }
  eq(pretty(t), "{ a = { b = { c = { d = { e = {…} } } } } }", "default depth 5")
  eq(pretty(t, { depth = 2 }), "{ a = { b = {…} } }", "depth 2")
  eq(pretty(t, { depth = 0 }), "{…}", "depth 0")
  eq(pretty({ a = { {} } }, { depth = 1 }), "{ a = {…} }", "depth 1")
  eq(pretty({ a = {} }, { depth = 1 }), "{ a = {} }", "empty tables are shown even beyond depth")
end

function T.test_pretty_items()
  local t = {}
  for i = 1, 5 do t[i] = i end
  t.x = "x"
  eq(pretty(t, { items = 3 }), "{ 1, 2, 3, … (3 more) }", "items limit")
  eq(pretty(t, { items = 6 }), '{ 1, 2, 3, 4, 5, x = "x" }', "exactly the limit")
  local big = {}
  for i = 1, 150 do big[i] = i end
  local lines = {}
  for line in (pretty(big) .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  eq(#lines, 103, "100 entries, the note and two braces")
  eq(lines[101], "  100,", "last shown entry")
  eq(lines[102], "  … (50 more)", "the note")
  eq(pretty({ a = 1, b = 2, c = 3 }, { items = 1, width = 12 }), "{\n  a = 1,\n  … (2 more)\n}",
     "note in multi-line layout")
end

function T.test_pretty_null()
  local null = setmetatable({}, { __name = "json.null" }) -- stands in for the lightuserdata
  eq(pretty(null, { null = null }), "null", "null itself")
  eq(pretty({ a = null, 1, null }, { null = null }), "{ 1, null, a = null }", "null inside")
  eq(pretty({ [null] = 1 }, { null = null }), "{ [null] = 1 }", "null as a key")
end

function T.test_pretty_metatable_name()
  local Point = { __name = "Point" }
  local p = setmetatable({ x = 1, y = 2 }, Point)
  local opts = { getmetatable = getmetatable }
  eq(pretty(p, opts), "Point { x = 1, y = 2 }", "named table")
  eq(pretty(p), "{ x = 1, y = 2 }", "no getter, no name")
  eq(pretty({ p }, opts), "{ Point { x = 1, y = 2 } }", "nested named table")
  eq(pretty(setmetatable({}, Point), opts), "Point {}", "empty named table")
  eq(pretty(setmetatable({}, { __name = 5 }), opts), "{}", "__name must be a string")
end

function T.test_pretty_never_calls_metamethods()
  local function boom() error("metamethod called") end
  local mt = { __index = boom, __newindex = boom, __pairs = boom, __len = boom, __tostring = boom,
               __eq = boom, __lt = boom, __le = boom, __concat = boom, __call = boom,
               __name = "Trap" }
  local t = setmetatable({ 1, 2, k = "v" }, mt)
  eq(pretty(t), '{ 1, 2, k = "v" }', "raw contents")
  eq(pretty(t, { getmetatable = getmetatable }), 'Trap { 1, 2, k = "v" }', "raw contents, named")
  local key = setmetatable({}, mt)
  local shown = pretty({ [key] = 1, [setmetatable({}, mt)] = 2 })
  assert(shown == "{ [{}] = 1, [{}] = 2 }" or shown == "{ [{}] = 2, [{}] = 1 }",
         "tables with metamethods as keys, got " .. shown)
  local f = function() end
  eq(pretty(setmetatable({ f }, { __metatable = "locked" })), "{ " .. tostring(f) .. " }",
     "protected metatable")
end

---------------------------------------------------------------------------------------------
-- results
---------------------------------------------------------------------------------------------

function T.test_results()
  eq(repl.results(0), "", "no results")
  eq(repl.results(1, { 1 }), "{ 1 }", "one result")
  eq(repl.results(1, nil), "nil", "one nil")
  eq(repl.results(3, 1, "a", { 1 }), '1, "a", { 1 }', "several short results")
  eq(repl.results(3, 1, nil, nil), "1, nil, nil", "trailing nils are shown")
  eq(repl.results(nil, 1, 2), "1, 2", "n defaults to select('#', ...)")
end

function T.test_results_numbered()
  local long = string.rep("x", 50)
  eq(repl.results(2, long, long), '[1] "' .. long .. '"\n[2] "' .. long .. '"',
     "too wide for one line")
  local t = { alpha = string.rep("a", 40), beta = string.rep("b", 40) }
  eq(repl.results(2, 1, t), '[1] 1\n[2] {\n  alpha = "' .. string.rep("a", 40) .. '",\n  beta = "'
     .. string.rep("b", 40) .. '",\n}', "a multi-line result")
end

function T.test_results_use_module_options()
  local saved = repl.options.width
  repl.options.width = 10
  local ok, err = pcall(function()
    eq(repl.results(2, "abc", "def"), '[1] "abc"\n[2] "def"', "options.width applies")
    eq(repl.pretty({ 1, 2, 3, 4 }), "{\n  1,\n  2,\n  3,\n  4,\n}", "options.width in pretty")
    eq(repl.pretty({ 1, 2, 3, 4 }, { width = 80 }), "{ 1, 2, 3, 4 }", "call opts win")
  end)
  repl.options.width = saved
  assert(ok, err)
end

---------------------------------------------------------------------------------------------
-- complete
---------------------------------------------------------------------------------------------

-- A REPL-like environment: plain tables, a "userdata" (a table whose metatable only the
-- fake getter reveals) and a string.
local function fixture()
  local calls = 0
  local function counted() calls = calls + 1 end
  local Client = { entries = counted, treatments = counted, profile = counted, url = "x",
                   _request = counted }
  local home = {}                                     -- a stand-in for a userdata
  local metas = { [home] = { __index = Client, __name = "nightscout.Client" } }
  local trap = setmetatable({}, { __index = function() calls = calls + 1 end })
  metas[trap] = getmetatable(trap)
  local env = {
    string = string, print = print, pairs = pairs, pcall = pcall,
    home = home, trap = trap, s = "text",
    json = { encode = counted, decode = counted, null = {}, _private = 1 },
    a = { b = { c = { deep = 1, deeper = 2, [3] = 3 } } },
    t = { ["key one"] = 1, key2 = 2, ['q"uote'] = 3, [1] = { x = 1 } },
    _VERSION = "Lua 5.4",
  }
  local string_mt = { __index = string }
  local opts = {
    getmetatable = function(v)
      if type(v) == "string" then return string_mt end
      return metas[v]
    end,
    modules = { "nightscout", "nightscout.client", "timer", "json", "task" },
  }
  return env, opts, function() return calls end
end

local function complete(line, env, opts, cursor)
  return repl.complete(line, cursor, env, opts)
end

function T.test_complete_dotted_chains()
  local env, opts = fixture()
  local c, start = complete("string.fo", env, opts)
  same_list(c, { "string.format" }, "string.fo")
  eq(start, 1, "replacement starts at the chain")
  c, start = complete("x = string.fo", env, opts)
  same_list(c, { "string.format" }, "after an assignment")
  eq(start, 5, "start after 'x = '")
  same_list(complete("json.", env, opts), { "json.decode", "json.encode", "json.null" },
            "all public members")
  same_list(complete("a.b.c.de", env, opts), { "a.b.c.deep", "a.b.c.deeper" }, "deep chain")
  same_list(complete('t["key one"].', env, opts), {}, "member of a number")
  same_list(complete("t[1].", env, opts), { "t[1].x" }, "integer index in the chain")
  same_list(complete("print(a.b.", env, opts), { "a.b.c" }, "inside a call")
  same_list(complete("json.nope.", env, opts), {}, "missing member")
  same_list(complete("nope.x", env, opts), {}, "missing global")
end

function T.test_complete_underscore_members()
  local env, opts = fixture()
  same_list(complete("json._", env, opts), { "json._private" }, "typed _ shows _members")
  same_list(complete("home:_", env, opts), { "home:_request" }, "also for methods")
  same_list(complete("_", env, opts), { "_VERSION" }, "globals")
end

function T.test_complete_methods_via_getmetatable()
  local env, opts = fixture()
  local c, start = complete("home:en", env, opts)
  same_list(c, { "home:entries" }, "method of a userdata-like value")
  eq(start, 1, "start")
  same_list(complete("home:", env, opts), { "home:entries", "home:profile", "home:treatments" },
            "after ':' only functions")
  same_list(complete("home.", env, opts),
            { "home.entries", "home.profile", "home.treatments", "home.url" }, "after '.' all")
  same_list(complete("s:up", env, opts), { "s:upper" }, "string methods")
  same_list(complete("home:en", env, { modules = opts.modules }), {},
            "no getter, no completion through metatables")
  same_list(complete("s:up", env, {}), {}, "no getter, no string methods")
end

function T.test_complete_never_calls()
  local env, opts, calls = fixture()
  same_list(complete("trap.", env, opts), {}, "function __index is not followed")
  same_list(complete("trap.x.", env, opts), {}, "nor used to resolve")
  complete("home:", env, opts)
  complete("json.", env, opts)
  eq(calls(), 0, "nothing was called")
end

function T.test_complete_globals_and_keywords()
  local env, opts = fixture()
  local c, start = complete("pr", env, opts)
  same_list(c, { "print" }, "global")
  eq(start, 1, "start")
  same_list(complete("x = pc", env, opts), { "pcall" }, "after an operator")
  same_list(complete("wh", env, opts), { "while" }, "keyword")
  same_list(complete("if x th", env, opts), { "then" }, "keyword after other words")
  same_list(complete("fu", env, opts), { "function" }, "function")
  same_list(complete("el", env, opts), { "else", "elseif" }, "two keywords, sorted")
  c = complete("", env, opts)
  assert(#c > 20, "an empty line offers everything, got " .. #c)
  eq(c[1], "a", "sorted, first")
end

function T.test_complete_env_with_index_table()
  local _, opts = fixture()
  local base = { print = print, pairs = pairs }
  local env = setmetatable({ mine = 1 }, { __index = base })
  local getter = function(v) return getmetatable(v) end
  same_list(complete("p", env, { getmetatable = getter }), { "pairs", "print" },
            "globals through the env's __index table")
  same_list(complete("mi", env, opts), { "mine" }, "raw globals")
end

function T.test_complete_bracket_keys()
  local env, opts = fixture()
  local c, start = complete('t["ke', env, opts)
  same_list(c, { 't["key one"]', 't["key2"]' }, "string keys")
  eq(start, 1, "start")
  same_list(complete("t['q", env, opts), { [==[t['q"uote']]==] }, "single quotes")
  same_list(complete('t["q', env, opts), { [==[t["q\"uote"]]==] }, "quote escaped")
  same_list(complete('x = a.b["', env, opts), { 'a.b["c"]' }, "after a chain")
end

function T.test_complete_require()
  local env, opts = fixture()
  local c, start = complete('require "ni', env, opts)
  same_list(c, { "nightscout", "nightscout.client" }, "require with a space")
  eq(start, 10, "replaces the partial module name")
  same_list(complete("local t = require('t", env, opts), { "task", "timer" }, "require(")
  same_list(complete("require 'j", env, opts), { "json" }, "single quote")
  same_list(complete('require "', env, opts), { "json", "nightscout", "nightscout.client",
            "task", "timer" }, "all modules")
  same_list(complete('require "x', env, opts), {}, "no match")
  same_list(complete('require "ni', env, {}), {}, "no module list")
end

function T.test_complete_cursor()
  local env, opts = fixture()
  local c, start = complete("string.fo(1) + x", env, opts, 10)
  same_list(c, { "string.format" }, "cursor in the middle")
  eq(start, 1, "start")
  c = complete("string.fo", env, opts, 100)
  same_list(c, { "string.format" }, "cursor past the end is clamped")
end

function T.test_complete_odd_input()
  local env, opts = fixture()
  local odd = { "x = 1.", "x = 12", "'unbalanced", '"abc', "[[long", "-- comment",
                "--[[ open", "a:b.c", "f().x", "1 +", "(", ")", "...", "a..", "a...b", "#",
                "\0\255", "t[", "t[x].", 'require "\\', "string..fo", "end.x" }
  for _, line in ipairs(odd) do
    local ok, c = pcall(repl.complete, line, nil, env, opts)
    assert(ok, ("raised for %q: %s"):format(line, tostring(c)))
    assert(type(c) == "table", ("no list for %q"):format(line))
  end
  same_list(complete("x = 12", env, opts), {}, "after a number")
  same_list(complete("'unbalanced", env, opts), {}, "inside a plain string")
  same_list(complete("-- comm", env, opts), {}, "inside a comment")
  same_list(complete("a:b.c", env, opts), {}, "':' inside a chain")
  same_list(complete("f().x", env, opts), {}, "after a call")
  local bad = { { nil, 1, env, opts }, { 42, nil, env, opts }, { "string.fo", nil, nil, opts },
                { "string.fo", nil, 5, opts }, { "string.fo", "x", env, 7 },
                { "string.fo", -3, env, opts } }
  for i, args in ipairs(bad) do
    local ok, c = pcall(repl.complete, args[1], args[2], args[3], args[4])
    assert(ok and type(c) == "table", "odd arguments #" .. i .. " must give a list")
  end
end

return T
