-- Tests for the json module (Sources/LuaShim/json.c).
local json = require "json"

local T = {}

-- Helpers -----------------------------------------------------------------------------------------

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

local function eq(actual, expected, what)
  assert(actual == expected,
    (what or "value") .. ": expected " .. show(expected) .. ", got " .. show(actual))
end

-- Runs f(...) and returns its error message, failing if it did not raise.
local function raises(f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(err)
end

local function encode_error(value, opts) return raises(json.encode, value, opts) end
local function decode_error(text, opts) return raises(json.decode, text, opts) end

-- Deep equality that tells json.null apart from nil and floats from integers.
local function same(a, b, path)
  path = path or "$"
  if type(a) ~= type(b) then error(path .. ": type " .. type(a) .. " vs " .. type(b)) end
  if type(a) == "number" then
    if math.type(a) ~= math.type(b) then error(path .. ": " .. math.type(a) .. " vs " .. math.type(b)) end
    if a ~= b then error(path .. ": " .. show(a) .. " vs " .. show(b)) end
  elseif type(a) == "table" then
    for k, v in pairs(a) do same(v, b[k], path .. "." .. tostring(k)) end
    for k in pairs(b) do
      if a[k] == nil then error(path .. ": extra key " .. tostring(k)) end
    end
  elseif a ~= b then
    error(path .. ": " .. show(a) .. " vs " .. show(b))
  end
end

local function is_negative_zero(x) return x == 0 and 1 / x < 0 end

-- Scalars and the module surface --------------------------------------------------------------------

function T.test_module_surface()
  eq(type(json.encode), "function", "encode")
  eq(type(json.decode), "function", "decode")
  eq(type(json.null), "userdata", "null")
  eq(type(json.empty_array), "userdata", "empty_array")
  assert(json.null ~= json.empty_array, "null and empty_array differ")
  eq(type(json.array_mt), "table", "array_mt")
  eq(type(json.safe.encode), "function", "safe.encode")
  eq(type(json.safe.decode), "function", "safe.decode")
end

function T.test_encode_scalars()
  eq(json.encode(nil), "null")
  eq(json.encode(json.null), "null")
  eq(json.encode(true), "true")
  eq(json.encode(false), "false")
  eq(json.encode(42), "42")
  eq(json.encode(-7), "-7")
  eq(json.encode(3.0), "3.0")
  eq(json.encode("hi"), '"hi"')
  eq(json.encode(json.empty_array), "[]")
  eq(json.encode({}), "{}")
end

function T.test_decode_scalars()
  eq(json.decode("null"), json.null)
  eq(json.decode("true"), true)
  eq(json.decode("false"), false)
  eq(json.decode('"x"'), "x")
  eq(math.type(json.decode("123")), "integer")
  eq(json.decode("123"), 123)
  eq(math.type(json.decode("3.0")), "float")
  eq(json.decode("3.0"), 3.0)
  eq(json.decode("-0"), 0)
  eq(math.type(json.decode("-0")), "integer")
  assert(is_negative_zero(json.decode("-0.0")), "-0.0 keeps its sign")
  eq(json.decode("1e2"), 100.0)
  eq(math.type(json.decode("1e2")), "float")
  eq(json.decode("1E+2"), 100.0)
  eq(json.decode("1.5e-3"), 1.5e-3)
  eq(json.decode("0e999"), 0.0)
end

-- Round trips ---------------------------------------------------------------------------------------

function T.test_nested_nulls_round_trip()
  local text = '{"a":[null,{"b":null},[null,null]],"c":null}'
  local v = json.decode(text)
  eq(v.a[1], json.null, "a[1]")
  eq(v.a[2].b, json.null, "a[2].b")
  eq(v.a[3][2], json.null, "a[3][2]")
  eq(v.c, json.null, "c")
  eq(json.encode(v, {sort_keys = true}), text)
  eq(json.encode(json.decode("[null]")), "[null]")
end

function T.test_empty_arrays_round_trip()
  eq(json.encode(json.decode("[]")), "[]")
  eq(json.encode(json.decode("[[],[[]]]")), "[[],[[]]]")
  eq(json.encode(json.decode('{"a":[],"b":{}}'), {sort_keys = true}), '{"a":[],"b":{}}')
  eq(json.encode({a = json.empty_array}), '{"a":[]}')
  eq(json.encode(setmetatable({}, json.array_mt)), "[]")
end

function T.test_int64_edges()
  eq(json.encode(math.maxinteger), "9223372036854775807")
  eq(json.encode(math.mininteger), "-9223372036854775808")
  for _, n in ipairs({math.maxinteger, math.mininteger, 0, 1, -1, 1600000000000,
            999999999999999999, 1000000000000000000, -1000000000000000000}) do
    local back = json.decode(json.encode(n))
    eq(math.type(back), "integer", "type of " .. n)
    eq(back, n)
  end
  eq(json.decode("-9223372036854775808"), math.mininteger)
  -- beyond int64: floats
  eq(math.type(json.decode("9223372036854775808")), "float")
  eq(json.decode("9223372036854775808"), 9223372036854775808.0)
  eq(math.type(json.decode("-9223372036854775809")), "float")
  eq(math.type(json.decode("12345678901234567890123")), "float")
  eq(json.decode("12345678901234567890123"), 1.2345678901234567890123e22)
end

-- Digits that, read as a 64-bit integer, wrap to a multiple of 2^64 once decoded to 0.0.
function T.test_decode_numbers_whose_digits_overflow_64_bits()
  eq(json.decode("18446744073709551616"), 2.0 ^ 64)
  eq(json.decode("-18446744073709551616"), -(2.0 ^ 64))
  eq(json.decode("36893488147419103232"), 2.0 ^ 65)
  eq(json.decode("1" .. string.rep("0", 64)), 1e64)
  eq(json.decode("1844674407370955161.6e-17"), 18.446744073709551616)
  eq(json.decode("18446744073709551616e-20"), 0.18446744073709551616)
  eq(json.decode("0.18446744073709551616e20"), 18446744073709551616.0)
  eq(json.decode("[18446744073709551616]")[1], 2.0 ^ 64)
  eq(math.type(json.decode("18446744073709551616")), "float")
  -- leading zeros of a fraction are not significant digits
  eq(json.decode("0.000000000000000000000000000001"), 1e-30)
  eq(json.decode("0." .. string.rep("0", 400) .. "1e401"), 1.0)
end

-- An exponent with more digits than the decoder keeps must not be cut short, even when a
-- fraction of leading zeros as long as the kept part would cancel it (10^900000 is inf).
function T.test_decode_long_exponent_with_long_fraction()
  eq(json.decode("0." .. string.rep("0", 99999) .. "1e1000000"), math.huge)
  eq(json.decode("-0." .. string.rep("0", 100000) .. "15e1000001"), -math.huge)
  eq(json.decode("0." .. string.rep("0", 100000) .. "1e100001"), 1.0)
  eq(json.decode("1e1000000"), math.huge)
  eq(json.decode("1e-1000000"), 0.0)
end

function T.test_floats_round_trip_exactly()
  local values = {0.1, 0.2, 0.30000000000000004, 1e300, 5e-324, 2.2250738585072014e-308,
          1.7976931348623157e308, 1 / 3, math.pi, 123456.789, -1.5, 1e-7, 2.0 ^ 53,
          2.0 ^ 63, 1e15, 1e16, 1e21, 1e22, 1e23, 4.35, 0.1 + 0.7, 9007199254740993.0,
          -123.456e-200, 1.0, 100.0, 6.02214076e23}
  for _, x in ipairs(values) do
    local text = json.encode(x)
    local back = json.decode(text)
    eq(math.type(back), "float", "type of " .. text)
    assert(back == x, string.format("%.17g encoded as %s came back as %.17g", x, text, back))
  end
  local z = json.decode(json.encode(-0.0))
  assert(is_negative_zero(z), "-0.0 round trip")
  eq(json.encode(-0.0), "-0.0")
  eq(json.encode(0.0), "0.0")
  eq(json.encode(0.1), "0.1")
  eq(json.encode(1.0), "1.0")
  eq(json.encode(-2.0), "-2.0")
  eq(json.encode(100.0), "100.0")
  eq(json.encode(1e300), "1e+300")
  eq(json.encode(0.30000000000000004), "0.30000000000000004")
  eq(json.decode("5e-324"), 5e-324)
  eq(json.decode("0.1"), 0.1)
  eq(json.decode("1.7976931348623157e308"), 1.7976931348623157e308)
end

function T.test_nan_and_inf_rejected()
  assert(encode_error(0 / 0):find("json.encode: cannot encode NaN/inf at $", 1, true))
  eq(encode_error(math.huge), "json.encode: cannot encode NaN/inf at $")
  eq(encode_error({x = {1, -math.huge}}), "json.encode: cannot encode NaN/inf at $.x[2]")
end

function T.test_invalid_utf8_survives_round_trip()
  local s = "\xff\xfe\xc3\x28\xed\xa0\x80\x80abc\0def\xf0\x9f\x98" -- invalid/truncated/NUL
  local text = json.encode(s)
  assert(text:find("\xff\xfe\xc3\x28", 1, true), "raw bytes are not escaped")
  eq(text:find("\\u0000", 1, true) ~= nil, true, "NUL is escaped")
  eq(json.decode(text), s)
  local all = {}
  for i = 0, 255 do all[#all + 1] = string.char(i) end
  all = table.concat(all)
  eq(json.decode(json.encode(all)), all, "all 256 bytes")
  eq(json.decode(json.encode({k = all})).k, all, "as a value in an object")
  eq(json.decode('"\xff\xc0"'), "\xff\xc0", "raw invalid bytes decode unchanged")
end

function T.test_string_escapes()
  eq(json.encode('a"b\\c'), [["a\"b\\c"]])
  eq(json.encode("a/b"), '"a/b"', "slash is not escaped")
  eq(json.encode("\b\f\n\r\t"), [["\b\f\n\r\t"]])
  eq(json.encode("\1\31\127"), '"\\u0001\\u001f\127"')
  eq(json.encode("é😀"), '"é😀"')
  eq(json.decode([["\"\\\/\b\f\n\r\t"]]), '"\\/\b\f\n\r\t')
  eq(json.decode([["\u00e9\u00E9"]]), "éé")
  eq(json.decode([["\ud83d\ude00"]]), "\xf0\x9f\x98\x80", "surrogate pair")
  eq(json.decode([["\ud800"]]), "\xed\xa0\x80", "lone high surrogate")
  eq(json.decode([["\udc00x"]]), "\xed\xb0\x80x", "lone low surrogate")
  eq(json.decode([["\ud800\u0041"]]), "\xed\xa0\x80A", "high surrogate then a non-surrogate")
  eq(json.decode([["\u0000"]]), "\0")
  local long = string.rep('ab\\"\\u00e9', 500) -- escaped string over the luaL_Buffer size
  eq(json.decode('"' .. long .. '"'), string.rep('ab"é', 500))
end

-- Decode errors ------------------------------------------------------------------------------------

function T.test_decode_errors_have_byte_offsets()
  local cases = {
    {'{"a":1} x', "trailing garbage at byte 9"},
    {"[1,2", "unexpected end of input at byte 5"},
    {'{"entries":[1,x]}', "unexpected character 'x' at byte 15"},
    {"", "unexpected end of input at byte 1"},
    {"   ", "unexpected end of input at byte 4"},
    {"[1,]", "unexpected character ']' at byte 4"},
    {'{"a" 1}', "unexpected character '1' at byte 6"},
    {'{"a":1,}', "unexpected character '}' at byte 8"},
    {"{1:2}", "unexpected character '1' at byte 2"},
    {'"abc', "unexpected end of input at byte 5"},
    {'"a\nb"', "control character in string at byte 3"},
    {'"a\\x"', "invalid escape at byte 3"},
    {'"\\u12"', "invalid \\u escape at byte 2"},
    {'"\\', "unexpected end of input at byte 3"},
    {"nul", "unexpected end of input at byte 4"},
    {"nulx", "unexpected character 'x' at byte 4"},
    {"\1", "unexpected byte 0x01 at byte 1"},
    {"[1] [2]", "trailing garbage at byte 5"},
    {"01", "invalid number at byte 1"},
    {"-01", "invalid number at byte 1"},
    {"+1", "unexpected character '+' at byte 1"},
    {".5", "unexpected character '.' at byte 1"},
    {"1.", "invalid number at byte 1"},
    {"1.e5", "invalid number at byte 1"},
    {"-", "invalid number at byte 1"},
    {"1e", "invalid number at byte 1"},
    {"1e+", "invalid number at byte 1"},
    {"0x10", "invalid number at byte 1"},
    {"NaN", "unexpected character 'N' at byte 1"},
    {"Infinity", "unexpected character 'I' at byte 1"},
    {"-Infinity", "invalid number at byte 1"},
    {"[1.5.3]", "invalid number at byte 2"},
    {"\xEF\xBB\xBF[1,", "unexpected end of input at byte 7"},
  }
  for _, c in ipairs(cases) do
    eq(decode_error(c[1]), "json.decode: " .. c[2], "error for " .. show(c[1]))
  end
end

function T.test_bom_and_whitespace()
  same(json.decode("\xEF\xBB\xBF [1] \n\t\r"), {1})
  same(json.decode(' \n{ "a" : [ 1 , 2 ] } '), {a = {1, 2}})
end

function T.test_decode_requires_a_string()
  assert(decode_error(42):find("string expected", 1, true))
  assert(decode_error(nil):find("string expected", 1, true))
end

-- Nesting ------------------------------------------------------------------------------------------

function T.test_deep_nesting_decode()
  local ok = string.rep("[", 1000) .. string.rep("]", 1000)
  assert(pcall(json.decode, ok), "1000 levels are fine")
  local deep = string.rep("[", 1001) .. string.rep("]", 1001)
  eq(decode_error(deep), "json.decode: nesting deeper than 1000 at byte 1001")
  eq(decode_error('{"a":{"b":[1]}}', {max_depth = 2}), "json.decode: nesting deeper than 2 at byte 11")
  same(json.decode("[[1]]", {max_depth = 2}), {{1}})
  -- an unterminated huge nesting fails cleanly too
  assert(decode_error(string.rep("[", 100000)):find("nesting deeper than 1000", 1, true))
end

function T.test_deep_nesting_encode()
  local t = {}
  local cur = t
  for _ = 1, 1000 do cur[1] = {}; cur = cur[1] end
  local err = encode_error(t)
  assert(err:find("^json%.encode: nesting deeper than 1000 at %$%[1%]"), err)
  eq(select(2, err:gsub("%[1%]", "")), 1000, "path length")
  eq(encode_error({{{{}}}}, {max_depth = 3}), "json.encode: nesting deeper than 3 at $[1][1][1]")
  eq(json.encode({{{}}}, {max_depth = 3}), "[[{}]]")
end

function T.test_max_depth_option_is_checked()
  assert(encode_error(1, {max_depth = 0}):find("max_depth", 1, true))
  assert(encode_error(1, {max_depth = 1.5}):find("max_depth", 1, true))
  assert(decode_error("1", {max_depth = 10 ^ 9 // 1}):find("max_depth", 1, true))
  assert(encode_error(1, {indent = 2}):find("indent", 1, true))
end

-- Tables on encode ---------------------------------------------------------------------------------

function T.test_sort_keys_and_indent_exact_text()
  local v = {b = {2, 1, {}}, a = {x = true, y = json.null}, c = "s", d = {},
       e = setmetatable({}, json.array_mt)}
  local expected = table.concat({
    "{",
    '  "a": {',
    '    "x": true,',
    '    "y": null',
    "  },",
    '  "b": [',
    "    2,",
    "    1,",
    "    {}",
    "  ],",
    '  "c": "s",',
    '  "d": {},',
    '  "e": []',
    "}",
  }, "\n")
  eq(json.encode(v, {sort_keys = true, indent = "  "}), expected)
  eq(json.encode(v, {sort_keys = true}), '{"a":{"x":true,"y":null},"b":[2,1,{}],"c":"s","d":{},"e":[]}')
  eq(json.encode({1, {a = 1}}, {indent = "\t"}), '[\n\t1,\n\t{\n\t\t"a": 1\n\t}\n]')
  eq(json.encode({}, {indent = "  "}), "{}")
  eq(json.encode(5, {indent = "  "}), "5")
end

function T.test_sort_keys_is_bytewise()
  local v = {["é"] = 1, a = 2, B = 3, _ = 4, aa = 5, [""] = 6}
  eq(json.encode(v, {sort_keys = true}), '{"":6,"B":3,"_":4,"a":2,"aa":5,"é":1}')
  -- number keys of a mixed table sort as their strings
  eq(json.encode({[10] = "x", [9] = "y", k = "z"}, {sort_keys = true}), '{"10":"x","9":"y","k":"z"}')
end

function T.test_arrays_and_objects()
  eq(json.encode({1, 2, 3}), "[1,2,3]")
  eq(json.encode({"a", {true}}), '["a",[true]]')
  eq(json.encode({a = 1}), '{"a":1}')
  eq(json.encode({1, 2, x = 3}, {sort_keys = true}), '{"1":1,"2":2,"x":3}')
  eq(json.encode({[0] = "a"}), '{"0":"a"}')
  eq(json.encode({[-1] = "a"}), '{"-1":"a"}')
  eq(json.encode({[1.5] = "a"}), '{"1.5":"a"}')
  eq(json.encode({[2 ^ 63] = 1}), '{"9.223372036854776e+18":1}')
  local back = json.decode(json.encode({x = 1, y = {1, 2}, z = "s"}))
  same(back, {x = 1, y = {1, 2}, z = "s"})
end

function T.test_sparse_array_rules()
  eq(json.encode({[1] = 1, [3] = 3}), "[1,null,3]")
  eq(json.encode({[1] = 1, [2] = 2, [4] = 4}), "[1,2,null,4]")
  eq(json.encode({[10] = 1}), "[null,null,null,null,null,null,null,null,null,1]")
  eq(json.encode({[1] = 1, [12] = 2, [3] = 3, [4] = 4, [5] = 5, [6] = 6}),
    "[1,null,3,4,5,6,null,null,null,null,null,2]")
  eq(encode_error({[11] = 1}), "json.encode: excessively sparse array at $")
  -- exactly at the ratio: max 12 = 2 x 6 keys is fine, max 11 with 5 keys is not
  eq(json.encode({1, 2, 3, 4, 5, [12] = 12}), "[1,2,3,4,5,null,null,null,null,null,null,12]")
  eq(encode_error({1, 2, 3, 4, [11] = 11}), "json.encode: excessively sparse array at $")
  eq(encode_error({[1] = 1, [20] = 2}), "json.encode: excessively sparse array at $")
  eq(encode_error({list = {[100] = 1}}), "json.encode: excessively sparse array at $.list")
  local holes = {1, 2, 3}
  holes[2] = nil
  eq(json.encode(holes), "[1,null,3]")
end

function T.test_cycles_rejected()
  local t = {}
  t.self = t
  eq(encode_error(t), "json.encode: cycle at $.self")
  local a = {b = {}}
  a.b.c = {a}
  eq(encode_error(a), "json.encode: cycle at $.b.c[1]")
  local shared = {1}
  eq(json.encode({shared, shared}), "[[1],[1]]", "shared tables are not cycles")
  local arr = setmetatable({}, json.array_mt)
  arr[1] = arr
  eq(encode_error(arr), "json.encode: cycle at $[1]")
end

function T.test_unencodable_values_have_paths()
  eq(encode_error(print), "json.encode: cannot encode function at $")
  eq(encode_error({entries = {{sgv = 1}, {sgv = 2}, {sgv = print}}}),
    "json.encode: cannot encode function at $.entries[3].sgv")
  eq(encode_error({["key with space"] = print}), 'json.encode: cannot encode function at $["key with space"]')
  eq(encode_error({['q"uote'] = {print}}), 'json.encode: cannot encode function at $["q\\"uote"][1]')
  eq(encode_error({co = coroutine.create(print)}), "json.encode: cannot encode thread at $.co")
  if io and io.stdout then -- a full userdata (the sandbox may leave io out)
    eq(encode_error({f = io.stdout}), "json.encode: cannot encode userdata at $.f")
  end
  eq(encode_error({[true] = 1}), "json.encode: cannot encode boolean key at $")
  eq(encode_error({x = {[{}] = 1}}), "json.encode: cannot encode table key at $.x")
  eq(encode_error({a = 1, [false] = 2}, {sort_keys = true}), "json.encode: cannot encode boolean key at $")
  eq(encode_error({[5] = {[7] = {f = print}}}), "json.encode: cannot encode function at $[5][7].f")
end

function T.test_other_metatables_are_ignored()
  local mt = {__index = function() return 1 end, __len = function() return 5 end,
        __pairs = function() error("no") end, __tojson = function() return "x" end}
  eq(json.encode(setmetatable({}, mt)), "{}")
  eq(json.encode(setmetatable({1, 2}, mt)), "[1,2]")
  eq(json.encode(setmetatable({a = 1}, mt)), '{"a":1}')
end

function T.test_array_mt_encoding()
  local t = setmetatable({1, 2}, json.array_mt)
  t.x = "ignored"
  eq(json.encode(t), "[1,2]")
  eq(json.encode(setmetatable({1, nil, 3}, json.array_mt)), "[1,null,3]")
end

-- Issue 24: integer keys beyond the border are written (holes as null) or, too sparse, refused;
-- never dropped silently.
function T.test_array_mt_keys_beyond_the_border()
  local msg = encode_error(setmetatable({[2^31] = 1}, json.array_mt))
  assert(msg:find("excessively sparse array", 1, true), msg)
  eq(json.encode(setmetatable({[2] = "b"}, json.array_mt)), '[null,"b"]')
  local t = setmetatable({1, 2}, json.array_mt)
  t[4] = 4
  t.x = "ignored"
  eq(json.encode(t), "[1,2,null,4]")
  local decoded = json.decode("[1,2,3]")
  decoded[5] = 5
  eq(json.encode(decoded), "[1,2,3,null,5]")
end

function T.test_array_mt_on_decoded_arrays()
  local v = json.decode('{"list":[1,[]],"empty":[],"obj":{}}')
  eq(getmetatable(v), nil, "objects get no metatable")
  eq(getmetatable(v.list), json.array_mt, "list")
  eq(getmetatable(v.list[2]), json.array_mt, "nested empty")
  eq(getmetatable(v.empty), json.array_mt, "empty")
  eq(getmetatable(v.obj), nil, "empty object")
  eq(getmetatable(json.decode("[]")), json.array_mt, "top-level empty")
  eq(json.encode(v.obj), "{}")
  eq(json.encode(v.empty), "[]")
end

-- Decode options and values --------------------------------------------------------------------------

function T.test_luanil()
  local v = json.decode('{"a":null,"b":1,"c":[1,null,3]}', {luanil = true})
  eq(v.a, nil, "a")
  eq(v.b, 1, "b")
  eq(v.c[2], nil, "c[2]")
  eq(v.c[3], 3, "c[3]")
  local keys = 0
  for _ in pairs(v) do keys = keys + 1 end
  eq(keys, 2, "null keys are left out")
  eq(json.decode("null", {luanil = true}), nil)
  eq(json.decode('{"a":1,"a":null}', {luanil = true}).a, nil, "a later null removes the key")
  eq(json.decode("[null]", {luanil = false})[1], json.null)
end

function T.test_duplicate_keys_last_wins()
  eq(json.decode('{"a":1,"a":2}').a, 2)
end

-- Safe variants ------------------------------------------------------------------------------------

function T.test_safe_decode()
  local v, err = json.safe.decode("[1,")
  eq(v, nil)
  eq(type(err), "table")
  eq(err.code, "json")
  eq(err.retryable, false)
  eq(err.offset, 4)
  eq(err.message, "json.decode: unexpected end of input at byte 4")
  eq(tostring(err), err.message)
  local ok = json.safe.decode('[1,{"a":[]}]')
  same(ok, {1, {a = {}}})
  eq(getmetatable(ok), json.array_mt)
  eq(getmetatable(ok[2].a), json.array_mt)
  eq(json.safe.decode("null", {luanil = true}), nil)
  local _, e2 = json.safe.decode(42)
  eq(e2.code, "json")
  eq(e2.offset, nil)
  assert(tostring(e2):find("string expected", 1, true), tostring(e2))
  local _, e3 = json.safe.decode("[1]", {max_depth = 0})
  assert(e3.message:find("max_depth", 1, true))
  local _, e4 = json.safe.decode(string.rep("[", 2000))
  eq(e4.offset, 1001)
end

function T.test_safe_encode()
  eq(json.safe.encode({1, "a"}), '[1,"a"]')
  eq(json.safe.encode({b = 1, a = 2}, {sort_keys = true}), '{"a":2,"b":1}')
  local v, err = json.safe.encode({f = print})
  eq(v, nil)
  eq(err.code, "json")
  eq(err.retryable, false)
  eq(err.offset, nil)
  eq(err.message, "json.encode: cannot encode function at $.f")
  eq(tostring(err), err.message)
  local t = {}
  t[1] = t
  local _, e2 = json.safe.encode(t)
  eq(tostring(e2), "json.encode: cycle at $[1]")
  local _, e3 = json.safe.encode()
  eq(e3.code, "json")
  assert(e3.message:find("value expected", 1, true), e3.message)
  eq(json.safe.encode(nil), "null")
end

-- Bigger documents ----------------------------------------------------------------------------------

local function cgm_entries(n)
  local list = {}
  for i = 1, n do
    list[i] = {
      _id = string.format("5f2b%020x", i), device = "xDrip-DexcomG6",
      date = 1600000000000 + i * 300000, dateString = "2020-09-13T12:26:40.000Z",
      sgv = 100 + i % 50, delta = (i % 7) - 3.5, direction = "Flat", type = "sgv",
      filtered = 123456.789 + i, unfiltered = 1e-3 * i, rssi = 100, noise = 1,
      sysTime = "2020-09-13T12:26:40.000Z", utcOffset = 0, note = (i % 5 == 0) and json.null or nil,
    }
  end
  return list
end

function T.test_cgm_document_round_trip()
  local list = cgm_entries(500)
  local text = json.encode(list)
  same(json.decode(text), list)
  local pretty = json.encode(list, {indent = "  ", sort_keys = true})
  same(json.decode(pretty), list)
  eq(json.encode(json.decode(pretty), {indent = "  ", sort_keys = true}), pretty, "stable text")
end

-- With a decimal-comma locale installed, number text must still use '.'; without one (or
-- without os.setlocale in the sandbox) the same checks run in the current locale.
function T.test_locale_independent()
  local setlocale = os and os.setlocale or function() return nil end
  local previous = setlocale(nil, "numeric")
  local found
  for _, name in ipairs({"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "ru_RU.UTF-8", "de_DE"}) do
    if setlocale(name, "numeric") then found = name break end
  end
  local ok, err = pcall(function()
    eq(json.encode(1.5), "1.5")
    eq(json.encode({0.1, 2.5e-8}), "[0.1,2.5e-08]")
    eq(json.decode("1.5"), 1.5)
    eq(json.decode("123456.789e-3"), 123.456789)
    eq(json.decode("1.00000000000000000000001"), 1.0)
  end)
  if previous then setlocale(previous, "numeric") end
  assert(ok, tostring(err) .. " (locale " .. tostring(found) .. ")")
end

return T
