-- Lua 5.4 patterns: string.find, string.match, string.gmatch and string.gsub.
--
-- Lookout replaces these four functions with its own implementation (LuaShim/pattern.c) so that
-- the CPU and time limits also stop a pattern that backtracks for minutes. The replacement must
-- behave exactly like Lua 5.4.4's: every expected value below is what Lua 5.4.4 returns.
local T = {}

-- ---- Helpers (no pattern functions: they are what is under test) ---------------------------------

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- Asserts that the packed results r equal expected; {} stands for a single nil (no match).
local function check(what, r, expected)
  if #expected == 0 then
    assert(r.n == 1 and r[1] == nil, what .. ": expected nil, got " .. show(r[1]))
    return
  end
  assert(r.n == #expected, what .. ": expected " .. #expected .. " results, got " .. r.n)
  for i = 1, r.n do
    local a, b = r[i], expected[i]
    assert(type(a) == type(b) and a == b and math.type(a) == math.type(b),
      what .. ": result " .. i .. " is " .. show(a) .. ", expected " .. show(b))
  end
end

local function describe(name, ...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = show(t[i]) end
  return name .. "(" .. table.concat(t, ", ", 1, t.n) .. ")"
end

local function ends_with(s, suffix)
  return type(s) == "string" and s:sub(-#suffix) == suffix
end

-- ---- string.find ---------------------------------------------------------------------------------

-- subject, pattern, init, plain, expected results ({} = nil)
local FIND = {
    {"hello world", "o w", nil, nil, {5, 7}},
    {"hello world", "l+", nil, nil, {3, 4}},
    {"hello", "xyz", nil, nil, {}},
    {"hello", "", nil, nil, {1, 0}},
    {"", "", nil, nil, {1, 0}},
    {"", "a*", nil, nil, {1, 0}},
    {"hello", "l", 4, nil, {4, 4}},
    {"hello", "l", -2, nil, {4, 4}},
    {"hello", "l", -100, nil, {3, 3}},
    {"hello", "l", 0, nil, {3, 3}},
    {"hello", "", 6, nil, {6, 5}},
    {"hello", "", 7, nil, {}},
    {"hello", "h", 100, nil, {}},
    {"hello", "o", -1, nil, {5, 5}},
    {"a.b", ".", nil, nil, {1, 1}},
    {"a.b", ".", 1, true, {2, 2}},
    {"a+b", "+", 1, true, {2, 2}},
    {"a%b", "%", 1, true, {2, 2}},
    {"^x", "^x", 1, true, {1, 2}},
    {"x^", "^", nil, nil, {1, 0}},
    {"x^", "^", 1, true, {2, 2}},
    {"x^", "^", 2, nil, {2, 1}},
    {"a]b", "]", nil, nil, {2, 2}},
    {"a)b", "a)", nil, nil, {1, 2}},
    {"aXb", "[X", 1, true, {}},
    {"abcabc", "bc", 3, true, {5, 6}},
    {"abc", "", 10, true, {}},
    {"key = value", "(%w+)%s*=%s*(%w+)", nil, nil, {1, 11, "key", "value"}},
    {"hello", "()ll()", nil, nil, {3, 4, 3, 5}},
    {"hello", "(h)(e)(l)(l)(o)", nil, nil, {1, 5, "h", "e", "l", "l", "o"}},
    {"hello", "^h", nil, nil, {1, 1}},
    {"hello", "^e", nil, nil, {}},
    {"hello", "o$", nil, nil, {5, 5}},
    {"hello", "l$", nil, nil, {}},
    {"a$b", "$b", nil, nil, {2, 3}},
    {"a$b", "a$", nil, nil, {}},
    {"hello", "^hello$", nil, nil, {1, 5}},
    {"hello", "^", 3, nil, {3, 2}},
    {"hello", "^l", 3, nil, {3, 3}},
    {"hello", "$", nil, nil, {6, 5}},
    {"abc123", "%d+", nil, nil, {4, 6}},
    {"  x", "%S", nil, nil, {3, 3}},
    {"abc", "%u", nil, nil, {}},
    {"aBc", "%u", nil, nil, {2, 2}},
    {"a.b", "%p", nil, nil, {2, 2}},
    {"\9\n x", "%s+", nil, nil, {1, 3}},
    {"0xFF!", "%x+", nil, nil, {1, 1}},
    {"abc_1", "%W", nil, nil, {4, 4}},
    {"ab\1c", "%c", nil, nil, {3, 3}},
    {"a b", "%g%G%g", nil, nil, {1, 3}},
    {"x\0y", "%z", nil, nil, {2, 2}},
    {"hello", "[lo]+", nil, nil, {3, 5}},
    {"hello", "[^hel]", nil, nil, {5, 5}},
    {"b-a", "[a-]+", nil, nil, {2, 3}},
    {"x]y", "[]]", nil, nil, {2, 2}},
    {"x]y", "[^]]+", nil, nil, {1, 1}},
    {"a1-", "[%d-]+", nil, nil, {2, 3}},
    {"f", "[a-f]", nil, nil, {1, 1}},
    {"g", "[a-f]", nil, nil, {}},
    {"x^", "[%^]", nil, nil, {2, 2}},
    {"a%b", "[%%]", nil, nil, {2, 2}},
    {"a-z", "[z-a]", nil, nil, {}},
    {"AbC", "[%l]", nil, nil, {2, 2}},
    {"a]b", "[%]]", nil, nil, {2, 2}},
    {"a^b", "[b^]", nil, nil, {2, 2}},
    {"a-b", "[%a-]+", 2, nil, {2, 3}},
    {"aaa", "a-", nil, nil, {1, 0}},
    {"aaab", "a-b", nil, nil, {1, 4}},
    {"aaa", "a*", nil, nil, {1, 3}},
    {"baaa", "a*", nil, nil, {1, 0}},
    {"aaa", "a?a?a?a?", nil, nil, {1, 3}},
    {"ab", "a?b", nil, nil, {1, 2}},
    {"b", "a+", nil, nil, {}},
    {"xaaay", "a+", nil, nil, {2, 4}},
    {"xaaay", "xa-y", nil, nil, {1, 5}},
    {"xy", "xa*y", nil, nil, {1, 2}},
    {"<a><b>", "<.->", nil, nil, {1, 3}},
    {"<a><b>", "<.*>", nil, nil, {1, 6}},
    {"f(a(b)c)d", "%b()", nil, nil, {2, 8}},
    {"x[[]]y", "%b[]", nil, nil, {2, 5}},
    {"no", "%b()", nil, nil, {}},
    {"'a' 'b'", "%b''", nil, nil, {1, 3}},
    {"(()", "%b()", nil, nil, {2, 3}},
    {"f(a)b", "%b()b", nil, nil, {2, 5}},
    {"THE (quick) fox", "%f[%a]%a+", nil, nil, {1, 3}},
    {"hello", "%f[%l]", nil, nil, {1, 0}},
    {"hello world", "%f[%s]", nil, nil, {6, 5}},
    {"hello", "%f[^%l]", nil, nil, {6, 5}},
    {"hello", "%f[%z]", nil, nil, {6, 5}},
    {"x1", "%f[%d]", nil, nil, {2, 1}},
    {"say \"hi\" and 'x'", "([\"'])(.-)%1", nil, nil, {5, 8, "\"", "hi"}},
    {"abab", "(ab)%1", nil, nil, {1, 4, "ab"}},
    {"abac", "(ab)%1", nil, nil, {}},
    {"aa", "()%1", nil, nil, {}},
    {"a\0b", "%z", nil, nil, {2, 2}},
    {"a\0b", "\0b", nil, nil, {2, 3}},
    {"a\0b", "[\0]", nil, nil, {2, 2}},
    {"a\0b", "%Z+", 2, nil, {3, 3}},
    {"a.b", "%.b", nil, nil, {2, 3}},
    {"x(y)", "%((%a)%)", nil, nil, {2, 4, "y"}},
    {"a+b", "a%+b", nil, nil, {1, 3}},
    {"a-b", "a%-b", nil, nil, {1, 3}},
    {"a b c", "%s(%a)%s", nil, nil, {2, 4, "b"}},
}

function T.test_find()
  for _, c in ipairs(FIND) do
    check(describe("find", c[1], c[2], c[3], c[4]), table.pack(string.find(c[1], c[2], c[3], c[4])), c[5])
  end
end

-- ---- string.match --------------------------------------------------------------------------------

-- subject, pattern, init, expected results ({} = nil)
local MATCH = {
    {"hello world", "%w+", nil, {"hello"}},
    {"hello world", "%w+", 7, {"world"}},
    {"2024-01-15", "(%d+)-(%d+)-(%d+)", nil, {"2024", "01", "15"}},
    {"key=val", "(%w+)=(%w+)", nil, {"key", "val"}},
    {"  trim me  ", "^%s*(.-)%s*$", nil, {"trim me"}},
    {"hello", "()", nil, {1}},
    {"hello", "()", 3, {3}},
    {"hello", "l()", nil, {4}},
    {"hello", "(h)()", nil, {"h", 2}},
    {"abc", "^(a)(b)", nil, {"a", "b"}},
    {"hello", "x", nil, {}},
    {"hello", "", 10, {}},
    {"hello", "", 6, {""}},
    {"hello", "o", -1, {"o"}},
    {"[[x]]", "%[(%b[])%]", nil, {"[x]"}},
    {"abcd", "((a)(b(c)))", nil, {"abc", "a", "bc", "c"}},
    {"aaa", "(a*(.))", nil, {"aaa", "a"}},
    {"abc", "^abc$", nil, {"abc"}},
    {"abc", "^b", nil, {}},
    {"hello", ".-(l+)(.*)", nil, {"ll", "o"}},
    {"x = 10", "(%a+)%s*=%s*(%d+)", nil, {"x", "10"}},
    {"abc", "b", -10, {"b"}},
    {"abc", "^b", 2, {"b"}},
    {"a.b.c", "^(.-)%.(.*)$", nil, {"a", "b.c"}},
    {"aaa", "^(a-)$", nil, {"aaa"}},
    {"aab", "(a?)(a?)(a?)b", nil, {"a", "a", ""}},
    {"one;two", "([^;]*);?(.*)", nil, {"one", "two"}},
    {"[tag]", "^%[(.*)%]$", nil, {"tag"}},
    {"$1.50", "%$(%d+)%.(%d%d)", nil, {"1", "50"}},
    {"abab", "^(ab)%1$", nil, {"ab"}},
}

function T.test_match()
  for _, c in ipairs(MATCH) do
    check(describe("match", c[1], c[2], c[3]), table.pack(string.match(c[1], c[2], c[3])), c[4])
  end
end

-- ---- string.gmatch -------------------------------------------------------------------------------

-- subject, pattern, init, the results of each iteration
local GMATCH = {
    {"one two  three", "%a+", nil, {{"one"}, {"two"}, {"three"}}},
    {"k1=v1, k2=v2", "(%w+)=(%w+)", nil, {{"k1", "v1"}, {"k2", "v2"}}},
    {"abc", "", nil, {{""}, {""}, {""}, {""}}},
    {"abc", "x*", nil, {{""}, {""}, {""}, {""}}},
    {"hello", "()l", nil, {{3}, {4}}},
    {"a,b,,c", "([^,]*)", nil, {{"a"}, {"b"}, {""}, {"c"}}},
    {"hello world", "%a+", 3, {{"llo"}, {"world"}}},
    {"hello", "%a", -2, {{"l"}, {"o"}}},
    {"abc", "a", 10, {}},
    {"abc", "", 4, {{""}}},
    {"^a^a", "^a", nil, {{"^a"}, {"^a"}}},
    {"abc", ".-", nil, {{""}, {""}, {""}, {""}}},
    {"aaa", "a-", nil, {{""}, {""}, {""}, {""}}},
    {"a1b22c333", "%d+", nil, {{"1"}, {"22"}, {"333"}}},
    {"(a)(b(c))", "%b()", nil, {{"(a)"}, {"(b(c))"}}},
    {"THE (quick) fox", "%f[%a]%a+", nil, {{"THE"}, {"quick"}, {"fox"}}},
    {"xyz", "()(.)", nil, {{1, "x"}, {2, "y"}, {3, "z"}}},
    {"", "", nil, {{""}}},
    {"ab", "a*", nil, {{"a"}, {""}}},
}

function T.test_gmatch()
  for _, c in ipairs(GMATCH) do
    local what = describe("gmatch", c[1], c[2], c[3])
    local it = string.gmatch(c[1], c[2], c[3])
    for i, expected in ipairs(c[4]) do check(what .. " #" .. i, table.pack(it()), expected) end
    assert(it() == nil, what .. ": too many matches")
    assert(it() == nil, what .. ": matches after the end")
  end
end

function T.test_gmatch_in_for_loop()
  local keys, values = {}, {}
  for k, v in string.gmatch("a=1, b=22, c=333", "(%w+)=(%w+)") do
    keys[#keys + 1], values[#values + 1] = k, v
  end
  assert(table.concat(keys, ",") == "a,b,c" and table.concat(values, ",") == "1,22,333")
end

-- ---- string.gsub ---------------------------------------------------------------------------------

-- subject, pattern, replacement, max, expected string, expected count
local GSUB = {
    {"hello world", "o", "0", nil, "hell0 w0rld", 2},
    {"hello world", "o", "0", 1, "hell0 world", 1},
    {"hello", "", "-", nil, "-h-e-l-l-o-", 6},
    {"hello world", "(%w+)", "<%1>", nil, "<hello> <world>", 2},
    {"hello world", "%w+", "%0 %0", nil, "hello hello world world", 2},
    {"hello", "l", "%%", nil, "he%%o", 2},
    {"abc", "%w", "%1", nil, "abc", 3},
    {"hello world", "(o)()", "%2", nil, "hell6 w9rld", 2},
    {"hello", "^h", "H", nil, "Hello", 1},
    {"hello", "^l", "L", nil, "hello", 0},
    {"abc", "b*", "-", nil, "-a-c-", 3},
    {"abc", "x", "y", nil, "abc", 0},
    {"hello", "l", "L", 0, "hello", 0},
    {"hello", "l", "L", -1, "hello", 0},
    {"hello", "l", 5, nil, "he55o", 2},
    {"hello", "l", 2.5, nil, "he2.52.5o", 2},
    {"abc", "", "-", 2, "-a-bc", 2},
    {"abc", "$", "!", nil, "abc!", 1},
    {"a,b", "%f[%w]", "#", nil, "#a,#b", 2},
    {"hello world", "(%w+) (%w+)", "%2 %1", nil, "world hello", 1},
    {"abc", "(a)(b)(c)", "%3%2%1%0", nil, "cbaabc", 1},
    {"x", "x", "%%1", nil, "%1", 1},
    {"abc", ".", "%0%0", 2, "aabbc", 2},
    {"  a  b  ", "^%s+", "", nil, "a  b  ", 1},
    {"  a  b  ", "%s+$", "", nil, "  a  b", 1},
    {"a\0b", "%z", "0", nil, "a0b", 1},
    {"aaa", "a-", "x", nil, "xaxaxax", 4},
    {"hello", "l+", "", nil, "heo", 1},
    {"one two", "(%w+)", "[%1]", 1.0, "[one] two", 1},
}

function T.test_gsub_string_replacement()
  for _, c in ipairs(GSUB) do
    check(describe("gsub", c[1], c[2], c[3], c[4]), table.pack(string.gsub(c[1], c[2], c[3], c[4])),
      {c[5], c[6]})
  end
end

function T.test_gsub_table_replacement()
  local vars = {name = "Ann", age = 42, off = false}
  check("table vars", table.pack(string.gsub("$name is $age ($off, $missing)", "%$(%w+)", vars)),
    {"Ann is 42 ($off, $missing)", 4})
  -- without captures the whole match is the key; a position capture gives an integer key
  check("table whole match", table.pack(string.gsub("abc", "%w", {a = 1, b = false})), {"1bc", 3})
  check("table position key", table.pack(string.gsub("abc", "()b", {[2] = "X"})), {"aXc", 1})
  check("table float value", table.pack(string.gsub("abc", "b", {b = 0.5})), {"a0.5c", 1})
  check("table max", table.pack(string.gsub("aaa", "a", {a = "b"}, 2)), {"bba", 2})
  -- __index is honoured
  local calls = 0
  local proxy = setmetatable({}, {__index = function(_, k) calls = calls + 1; return k:upper() end})
  check("table __index", table.pack(string.gsub("ab", "%w", proxy)), {"AB", 2})
  assert(calls == 2)
end

function T.test_gsub_function_replacement()
  check("function upper", table.pack(string.gsub("hello world", "%w+", string.upper)), {"HELLO WORLD", 2})
  check("function captures", table.pack(string.gsub("k=v, x=y", "(%w)=(%w)", function(a, b) return b .. "=" .. a end)),
    {"v=k, y=x", 2})
  check("function number", table.pack(string.gsub("abc", "%w", function(c) return c:byte() end)), {"979899", 3})
  check("function nil/false keeps", table.pack(string.gsub("abcd", "%w", function(c)
    if c == "a" then return nil elseif c == "b" then return false else return "." end
  end)), {"ab..", 4})
  check("function position", table.pack(string.gsub("hello", "l()", function(p) return "[" .. p .. "]" end)),
    {"he[4][5]o", 2})
  local seen = {}
  string.gsub("a1b2", "(%a)(%d)()", function(...) seen[#seen + 1] = select("#", ...) .. ":" .. table.concat({...}, ",") end)
  assert(table.concat(seen, " ") == "3:a,1,3 3:b,2,5", table.concat(seen, " "))
  seen = {}
  string.gsub("abc", "", function(...) seen[#seen + 1] = select("#", ...) .. show((...)) end)
  assert(table.concat(seen, " ") == '1"" 1"" 1"" 1""', table.concat(seen, " "))
  check("function max", table.pack(string.gsub("aaa", "a", function() return "b" end, 1)), {"baa", 1})
end

-- ---- Character classes ---------------------------------------------------------------------------

local function chars(...)
  local t, ranges = {}, {...}
  for i = 1, #ranges, 2 do
    for b = ranges[i], ranges[i + 1] do t[#t + 1] = string.char(b) end
  end
  return table.concat(t)
end

-- Members among ASCII 0..127 (the C locale's <ctype.h>, which Lua uses).
local CLASSES = {
  a = chars(65, 90, 97, 122),
  c = chars(0, 31, 127, 127),
  d = chars(48, 57),
  g = chars(33, 126),
  l = chars(97, 122),
  p = chars(33, 47, 58, 64, 91, 96, 123, 126),
  s = chars(9, 13, 32, 32),
  u = chars(65, 90),
  w = chars(48, 57, 65, 90, 97, 122),
  x = chars(48, 57, 65, 70, 97, 102),
  z = chars(0, 0), -- deprecated, still supported by Lua 5.4
}

function T.test_character_classes()
  local ascii = chars(0, 127)
  for letter, members in pairs(CLASSES) do
    local is_member = {}
    for i = 1, #members do is_member[members:sub(i, i)] = true end
    local others = {}
    for i = 1, #ascii do
      local ch = ascii:sub(i, i)
      if not is_member[ch] then others[#others + 1] = ch end
    end
    others = table.concat(others)
    local up = letter:upper()
    assert(ascii:gsub("%" .. up, "") == members, "%" .. up .. " removes all but %" .. letter)
    assert(ascii:gsub("%" .. letter, "") == others, "%" .. letter)
    assert(ascii:gsub("[^%" .. letter .. "]", "") == members, "[^%" .. letter .. "]")
    assert(ascii:gsub("[%" .. up .. "]", "") == members, "[%" .. up .. "]")
    for i = 1, #ascii do
      local ch = ascii:sub(i, i)
      assert((string.find(ch, "%" .. letter) ~= nil) == (is_member[ch] == true), "%" .. letter .. " on " .. i)
      assert((string.match(ch, "[%" .. up .. "]") ~= nil) ~= (is_member[ch] == true), "%" .. up .. " on " .. i)
    end
  end
  -- . matches anything, including "\0" and bytes >= 128
  assert(select(2, string.gsub(chars(0, 255), ".", "")) == 256)
  -- other escaped characters stand for themselves
  check("escapes", table.pack(string.find("a.b%c(d)e[f]g*h", "%.b%%c%(d%)e%[f%]g%*h")), {2, 15})
  check("escaped letter", table.pack(string.find("kyz", "%y")), {2, 2})
end

-- ---- Errors --------------------------------------------------------------------------------------

-- function, arguments (packed), the exact message
local ERRORS = {
  {"find", table.pack("abc", "[a"), "malformed pattern (missing ']')"},
  {"find", table.pack("abc", "[^"), "malformed pattern (missing ']')"},
  {"find", table.pack("abc", "[]"), "malformed pattern (missing ']')"},
  {"find", table.pack("abc", "a[%]"), "malformed pattern (missing ']')"},
  {"find", table.pack("abc", "%"), "malformed pattern (ends with '%')"},
  {"match", table.pack("abc", "a%"), "malformed pattern (ends with '%')"},
  {"find", table.pack("abc", "%f"), "missing '[' after '%f' in pattern"},
  {"find", table.pack("abc", "%fa"), "missing '[' after '%f' in pattern"},
  {"find", table.pack("abc", "%f[a"), "malformed pattern (missing ']')"},
  {"find", table.pack("abc", "%b"), "malformed pattern (missing arguments to '%b')"},
  {"find", table.pack("abc", "%bx"), "malformed pattern (missing arguments to '%b')"},
  {"match", table.pack("abc", "%1"), "invalid capture index %1"},
  {"match", table.pack("abc", "%0"), "invalid capture index %0"},
  {"match", table.pack("abc", "(a%1)"), "invalid capture index %1"},
  {"match", table.pack("aa", "(a)%2"), "invalid capture index %2"},
  {"match", table.pack("abc", "a)"), "invalid pattern capture"},
  {"match", table.pack("abc", ")"), "invalid pattern capture"},
  {"match", table.pack("abc", "(a"), "unfinished capture"},
  {"find", table.pack("abc", "(a"), "unfinished capture"},
  {"match", table.pack("abc", "(a)(b"), "unfinished capture"},
  {"gsub", table.pack("abc", "(a", "%1"), "unfinished capture"},
  {"match", table.pack("abc", ("()"):rep(33)), "too many captures"},
  {"match", table.pack(("a"):rep(300), ("a?"):rep(200)), "pattern too complex"},
  {"find", table.pack(("a"):rep(300), ("(a)"):rep(10) .. ("a?"):rep(180)), "pattern too complex"},
  {"gsub", table.pack("abc", "(a)", "%2"), "invalid capture index %2"},
  {"gsub", table.pack("abc", "a", "%2"), "invalid capture index %2"},
  {"gsub", table.pack("abc", "a", "%"), "invalid use of '%' in replacement string"},
  {"gsub", table.pack("abc", "a", "x%y"), "invalid use of '%' in replacement string"},
  {"gsub", table.pack("abc", "a", {a = {}}), "invalid replacement value (a table)"},
  {"gsub", table.pack("abc", "a", function() return true end), "invalid replacement value (a boolean)"},
  {"gsub", table.pack("abc", "a", function() return function() end end), "invalid replacement value (a function)"},
}

-- Argument errors: the function's name in the message depends on how it is reached, so only the
-- start and the end are checked.
local ARGUMENT_ERRORS = {
  {"find", table.pack(nil, "a"), "#1", "(string expected, got nil)"},
  {"find", table.pack("a", nil), "#2", "(string expected, got nil)"},
  {"find", table.pack("a", "a", 1.5), "#3", "(number has no integer representation)"},
  {"find", table.pack("a", "a", "x"), "#3", "(number expected, got string)"},
  {"match", table.pack("a", {}), "#2", "(string expected, got table)"},
  {"gmatch", table.pack("a", "a", {}), "#3", "(number expected, got table)"},
  {"gsub", table.pack("abc", "a"), "#3", "(string/function/table expected, got no value)"},
  {"gsub", table.pack("abc", "a", true), "#3", "(string/function/table expected, got boolean)"},
  {"gsub", table.pack("abc", "a", "b", 1.5), "#4", "(number has no integer representation)"},
}

function T.test_error_messages()
  for _, c in ipairs(ERRORS) do
    local what = describe(c[1], table.unpack(c[2], 1, c[2].n))
    local ok, msg = pcall(string[c[1]], table.unpack(c[2], 1, c[2].n))
    assert(not ok, what .. " should fail")
    assert(msg == c[3], what .. ": " .. show(msg))
  end
  for _, c in ipairs(ARGUMENT_ERRORS) do
    local what = describe(c[1], table.unpack(c[2], 1, c[2].n))
    local ok, msg = pcall(string[c[1]], table.unpack(c[2], 1, c[2].n))
    assert(not ok, what .. " should fail")
    local start = "bad argument " .. c[3] .. " "
    assert(msg:sub(1, #start) == start and ends_with(msg, c[4]), what .. ": " .. show(msg))
  end
end

-- Like Lua, a malformed pattern is only reported when the matcher reaches the bad part.
function T.test_errors_are_raised_lazily()
  check("unreached '%'", table.pack(string.find("xyz", "a%")), {})
  check("unreached ')'", table.pack(string.match("xyz", "a)")), {})
  check("open capture, no match", table.pack(string.find("xyz", "(a")), {})
  check("plain find ignores magic", table.pack(string.find("a[b", "[", 1, true)), {2, 2})
  local it = string.gmatch("abc", "[")
  assert(not pcall(it), "gmatch reports the error when iterating")
  local ok, msg = pcall(string.gmatch, "abc", "[")
  assert(ok and type(msg) == "function")
end

function T.test_recursion_limit()
  -- each capture bracket and each repetition that matched is one level; 200 levels are allowed
  check("199 optional items", table.pack(string.find(("a"):rep(300), ("a?"):rep(199))), {1, 199})
  check("10 captures, 179 optional items",
    table.pack(select("#", string.find(("a"):rep(300), ("(a)"):rep(10) .. ("a?"):rep(179)))), {12})
  check("32 captures", table.pack(select("#", string.match("abc", ("()"):rep(32)))), {32})
end

-- ---- Method syntax and the string metatable ------------------------------------------------------

function T.test_method_syntax()
  local s = "hello world"
  check("s:find", table.pack(s:find("o", 5)), {5, 5})
  check("s:match", table.pack(s:match("(%w+) (%w+)")), {"hello", "world"})
  check("s:gsub", table.pack(s:gsub("o", "0")), {"hell0 w0rld", 2})
  local words = {}
  for w in s:gmatch("%a+") do words[#words + 1] = w end
  assert(table.concat(words, "|") == "hello|world")
  local mt = getmetatable("")
  if type(mt) == "table" then assert(mt.__index == string) end -- unless a sandbox hides it
  check("number subject", table.pack(string.find(12345, "34")), {3, 4})
  check("number pattern", table.pack(string.gsub(12345, 3, 9)), {"12945", 1})
end

-- ---- Budget --------------------------------------------------------------------------------------

-- Lua's matcher takes over a minute on this call and never yields to the count hook. Run by the
-- host's suite with a small CPU limit (it sets HOST_CPU_LIMIT_SET); the call must be stopped by
-- the limit instead of finishing.
function T.test_pathological_pattern_stops()
  if HOST_CPU_LIMIT_SET == nil then return end
  local ok, msg = pcall(string.find, ("a"):rep(250), ".-.-.-.-b$")
  assert(ok == false and type(msg) == "string" and msg:find("CPU limit exceeded", 1, true), tostring(msg))
  return ok, msg
end

return T
