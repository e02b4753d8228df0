-- lookout._repl: the Lua side of Lookout's REPL.
--
--   M.pretty(value, opts)               -> string   render a value for reading
--   M.results(n, ...)                   -> string   render the results of one REPL line
--   M.complete(line, cursor, env, opts) -> candidates, start   tab completion
--
-- Pure Lua 5.4. Nothing here calls a metamethod or a function it finds in the data:
-- values are read with rawget/next/rawlen/rawequal only. The host can pass a protected
-- `tostring` and a raw `getmetatable` in opts (or once in M.options).

-- Globals are captured now, so a REPL line that reassigns them cannot break us.
local next, rawget, rawequal, type, tostring, tonumber = next, rawget, rawequal, type, tostring,
  tonumber
local getmetatable, pcall, select, string, table, math, utf8 = getmetatable, pcall, select,
  string, table, math, utf8

local M = {}

-- Host-wide defaults, consulted when a call's opts does not set a field:
-- width, indent, depth, items, string_max, null, tostring, getmetatable, modules, annotate
-- (a host function(table, key, value) -> text shown as a comment after that value, or nil).
M.options = {}

local DEFAULTS = { width = 80, indent = "  ", depth = 5, items = 100, string_max = 2000 }

-- Once this many entries are shown in one rendering, further tables are shown as {…}
-- (keeps wide, shared structures from filling the terminal).
local MAX_ENTRIES = 10000
-- How many `__index` tables completion follows (guards against __index loops).
local MAX_HOPS = 8

local byte, fmt, sub = string.byte, string.format, string.sub
local find, match = string.find, string.match
local concat, sort = table.concat, table.sort
local mtype = math.type

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
            repeat return then true until while]]):gmatch("%a+") do
  KEYWORDS[w] = true
end

---------------------------------------------------------------------------------------------
-- Small helpers
---------------------------------------------------------------------------------------------

-- Merges call options over M.options over DEFAULTS into a fresh table.
local function options(opts)
  local o = {}
  for k, v in next, DEFAULTS do o[k] = v end
  for k, v in next, M.options do o[k] = v end
  if type(opts) == "table" then
    for k, v in next, opts do o[k] = v end
  end
  return o
end

-- Byte-wise string order (Lua's `<` follows the C locale, which the host may change).
local function bytes_less(a, b)
  if a == b then return false end
  local n = #a < #b and #a or #b
  for i = 1, n do
    local x, y = byte(a, i), byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- Columns a single line takes on a terminal (one per UTF-8 character).
local function columns(s)
  return utf8.len(s) or #s
end

local function is_identifier(s)
  return type(s) == "string" and find(s, "^[%a_][%w_]*$") ~= nil and not KEYWORDS[s]
end

local function starts_with(s, prefix)
  return sub(s, 1, #prefix) == prefix
end

---------------------------------------------------------------------------------------------
-- Atoms: strings, numbers, opaque values
---------------------------------------------------------------------------------------------

-- Named escapes Lua reads back.
local ESCAPES = {
  [7] = "\\a", [8] = "\\b", [9] = "\\t", [10] = "\\n", [11] = "\\v", [12] = "\\f",
  [13] = "\\r", [92] = "\\\\",
}
-- Bytes that need a look: controls, quotes, backslash, DEL and everything non-ASCII.
local SPECIAL = "[%z\1-\31\"'\\\127-\255]"

-- Length of the valid (shortest-form, non-surrogate) UTF-8 sequence starting at byte i
-- of s, or nil. Only called for bytes >= 0x80.
local function utf8_seq(s, i)
  local c = byte(s, i)
  local n, lo, hi -- continuation bytes, and the range allowed for the first one
  if c >= 0xC2 and c <= 0xDF then n, lo, hi = 1, 0x80, 0xBF
  elseif c == 0xE0 then n, lo, hi = 2, 0xA0, 0xBF
  elseif c == 0xED then n, lo, hi = 2, 0x80, 0x9F
  elseif c >= 0xE1 and c <= 0xEF then n, lo, hi = 2, 0x80, 0xBF
  elseif c == 0xF0 then n, lo, hi = 3, 0x90, 0xBF
  elseif c >= 0xF1 and c <= 0xF3 then n, lo, hi = 3, 0x80, 0xBF
  elseif c == 0xF4 then n, lo, hi = 3, 0x80, 0x8F
  else return nil end
  local c1 = byte(s, i + 1)
  if not c1 or c1 < lo or c1 > hi then return nil end
  for j = i + 2, i + n do
    local cj = byte(s, j)
    if not cj or cj < 0x80 or cj > 0xBF then return nil end
  end
  return n + 1
end

-- The body of a Lua string literal for s, quoted with q (" or '): printable UTF-8 kept,
-- controls escaped ("\n", "\27"), invalid bytes as "\xNN", C1 controls as "\u{85}".
local function escape_body(s, q)
  local out, i, n = {}, 1, #s
  while i <= n do
    local j = find(s, SPECIAL, i)
    if not j then
      out[#out + 1] = sub(s, i)
      break
    end
    if j > i then out[#out + 1] = sub(s, i, j - 1) end
    local c = byte(s, j)
    if c < 0x80 then
      local e = ESCAPES[c]
      if c == 34 or c == 39 then -- a quote: escape only the one that delimits
        e = (c == byte(q)) and "\\" .. q or string.char(c)
      elseif not e then -- decimal escape; three digits when a digit follows
        local d = byte(s, j + 1)
        e = (d and d >= 48 and d <= 57) and fmt("\\%03d", c) or fmt("\\%d", c)
      end
      out[#out + 1] = e
      i = j + 1
    else
      local len = utf8_seq(s, j)
      if not len then
        out[#out + 1] = fmt("\\x%02X", c)
        i = j + 1
      else
        if c == 0xC2 and byte(s, j + 1) <= 0x9F then -- U+0080..U+009F, C1 controls
          out[#out + 1] = fmt("\\u{%X}", byte(s, j + 1))
        else
          out[#out + 1] = sub(s, j, j + len - 1)
        end
        i = j + len
      end
    end
  end
  return concat(out)
end

-- A quoted string, cut after max bytes (at a character boundary) with a note.
local function string_text(s, max)
  if #s <= max then return '"' .. escape_body(s, '"') .. '"' end
  local cut = max
  -- do not split a UTF-8 character: back off over continuation bytes
  for _ = 1, 3 do
    local c = byte(s, cut + 1)
    if cut > 0 and c and c >= 0x80 and c <= 0xBF then cut = cut - 1 else break end
  end
  return '"' .. escape_body(sub(s, 1, cut), '"') .. '"' .. fmt("… (%d more bytes)", #s - cut)
end

-- Integers as integers; floats with the fewest digits that read back, always looking
-- like floats ("1.0", "1e+300"); nan, inf and -inf spelled out.
local function number_text(x)
  if mtype(x) == "integer" then return fmt("%d", x) end
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  local s
  for digits = 14, 17 do
    s = fmt("%." .. digits .. "g", x)
    if tonumber(s) == x then break end
  end
  if not find(s, "[.e]") then s = s .. ".0" end
  return s
end

-- The `__name` of v's metatable, read raw through the host's getter, or nil.
local function meta_name(v, o)
  if not o.getmetatable then return nil end
  local mt = o.getmetatable(v)
  if type(mt) ~= "table" then return nil end
  local name = rawget(mt, "__name")
  return type(name) == "string" and name or nil
end

-- Functions, userdata and threads: the host's protected tostring when given; otherwise
-- plain tostring, unless a metatable could make tostring run a metamethod.
local function opaque_text(v, o)
  if o.tostring then
    local ok, s = pcall(o.tostring, v)
    if ok and type(s) == "string" then return s end
  end
  if getmetatable(v) == nil then return tostring(v) end
  return fmt("%s: %p", meta_name(v, o) or type(v), v)
end

---------------------------------------------------------------------------------------------
-- Tables: build a tree of nodes, then lay it out
---------------------------------------------------------------------------------------------
-- A node is a string (an atom) or { head = "Point {", entries = { {key=, value=} },
-- more = "… (N more)"|nil, w = columns on one line }.

local build -- forward declaration

-- Sort rank of a key kind: numbers, strings, booleans, then everything else.
local RANK = { number = 1, string = 2, boolean = 3 }

-- Orders the keys of one table; labels holds a text for keys of "other" types.
local function key_order(labels)
  return function(a, b)
    local ta, tb = type(a), type(b)
    local ra, rb = RANK[ta] or 4, RANK[tb] or 4
    if ra ~= rb then return ra < rb end
    if ra == 1 then return a < b end
    if ra == 2 then return bytes_less(a, b) end
    if ra == 3 then return (not a) and b end
    if ta ~= tb then return ta < tb end
    return bytes_less(labels[a], labels[b])
  end
end

-- Length of the array part 1..n (consecutive non-nil integer keys from 1).
local function array_length(t)
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  return n
end

-- The keys of t outside its array part 1..n, sorted.
local function other_keys(t, n)
  local keys, labels = {}, {}
  local k = next(t)
  while k ~= nil do
    if not (mtype(k) == "integer" and k >= 1 and k <= n) then
      keys[#keys + 1] = k
      if not RANK[type(k)] then labels[k] = fmt("%p", k) end
    end
    k = next(t, k)
  end
  sort(keys, key_order(labels))
  return keys
end

-- Text of a node on one line.
local function flat(node)
  if type(node) == "string" then return node end
  local parts = {}
  local entries = node.entries
  for i = 1, #entries do parts[i] = (entries[i].key or "") .. flat(entries[i].value) end
  if node.more then parts[#parts + 1] = node.more end
  return node.head .. " " .. concat(parts, ", ") .. " }"
end

-- "name = " for identifiers, "[key] = " otherwise (the key always on one line).
local function key_text(k, o, level, path)
  if is_identifier(k) then return k .. " = " end
  return "[" .. flat(build(k, o, level, path)) .. "] = "
end

-- Columns of a node rendered on one line, computed once per node.
local function flat_width(node)
  if type(node) == "string" then return columns(node) end
  if node.w then return node.w end
  local w = columns(node.head) + 3 -- head .. " " .. entries .. " }"
  local entries = node.entries
  local count = #entries
  for i = 1, count do
    local e = entries[i]
    w = w + (e.key and columns(e.key) or 0) + flat_width(e.value)
  end
  if node.more then
    w = w + columns(node.more)
    count = count + 1
  end
  node.w = w + 2 * (count - 1)
  return node.w
end

local function build_table(t, o, level, path)
  local name = meta_name(t, o)
  local head = name and name .. " {" or "{"
  if path[t] then return "<cycle>" end
  if next(t) == nil then return head .. "}" end
  if level > o.depth or o.shown >= MAX_ENTRIES then return head .. "…}" end
  path[t] = true
  local n = array_length(t)
  local keys = other_keys(t, n)
  local entries, total = {}, n + #keys
  local shown = math.min(total, o.items)
  o.shown = o.shown + shown
  for i = 1, shown do
    if i <= n then
      entries[i] = { value = build(rawget(t, i), o, level + 1, path) }
    else
      local k = keys[i - n]
      local v = rawget(t, k)
      local node = build(v, o, level + 1, path)
      if o.annotate and type(node) == "string" then
        -- The host's note on a value (e.g. glucose with its unit), as a comment after it.
        local ok, note = pcall(o.annotate, t, k, v)
        if ok and type(note) == "string" and note ~= "" then node = node .. " --[[ " .. note .. " ]]" end
      end
      entries[i] = { key = key_text(k, o, level + 1, path), value = node }
    end
  end
  path[t] = nil
  local more = total > shown and fmt("… (%d more)", total - shown) or nil
  return { head = head, entries = entries, more = more }
end

-- Turns any value into a node.
function build(v, o, level, path)
  if o.null ~= nil and rawequal(v, o.null) then return "null" end
  local tv = type(v)
  if tv == "string" then return string_text(v, o.string_max) end
  if tv == "number" then return number_text(v) end
  if tv == "nil" or tv == "boolean" then return tostring(v) end
  if tv == "table" then return build_table(v, o, level, path) end
  return opaque_text(v, o)
end

-- Appends the lines of node to out: on one line when it fits, else one entry per line.
local function layout(node, o, out, indent, key, suffix)
  local prefix = indent .. (key or "")
  if type(node) == "string"
      or columns(prefix) + flat_width(node) + #suffix <= o.width then
    out[#out + 1] = prefix .. flat(node) .. suffix
    return
  end
  out[#out + 1] = prefix .. node.head
  local inner = indent .. o.indent
  local entries = node.entries
  for i = 1, #entries do layout(entries[i].value, o, out, inner, entries[i].key, ",") end
  if node.more then out[#out + 1] = inner .. node.more end
  out[#out + 1] = indent .. "}" .. suffix
end

--- Renders a value the way a person wants to read it at a prompt.
-- opts: width (80), indent ("  "), depth (5), items (100), string_max (2000),
-- null (a value shown as null), tostring (protected tostring for opaque values),
-- getmetatable (raw metatable getter; tables get their `__name` as a prefix).
function M.pretty(value, opts)
  local o = options(opts)
  o.shown = 0 -- entries shown so far, for MAX_ENTRIES
  local node = build(value, o, 1, {})
  local out = {}
  layout(node, o, out, "", nil, "")
  return concat(out, "\n")
end

--- Formats the n results of a REPL line: "" for none, the value for one, several on
-- one line as `1, "a", { 1 }` when short, else one per line numbered `[1] …`.
function M.results(n, ...)
  n = n or select("#", ...)
  if n == 0 then return "" end
  local o = options(nil)
  if n == 1 then return M.pretty((...), o) end
  local parts, one_line = {}, true
  for i = 1, n do
    parts[i] = M.pretty((select(i, ...)), o)
    if find(parts[i], "\n", 1, true) then one_line = false end
  end
  local joined = concat(parts, ", ")
  if one_line and columns(joined) <= o.width then return joined end
  for i = 1, n do
    local label = fmt("[%d] ", i)
    local narrow = options(o)
    narrow.width = math.max(o.width - #label, 20)
    parts[i] = label .. M.pretty((select(i, ...)), narrow)
  end
  return concat(parts, "\n")
end

---------------------------------------------------------------------------------------------
-- Completion
---------------------------------------------------------------------------------------------

-- Splits source text into tokens { kind = "name"|"number"|"string"|"op", text, s, e,
-- value (strings without escapes) }. The second result tells where the text ends:
-- "code", "string" (then the quote and its position), "longstring" or "comment".
local function lex(src)
  local toks, i, n = {}, 1, #src
  local function push(kind, s, e, value)
    toks[#toks + 1] = { kind = kind, text = sub(src, s, e), s = s, e = e, value = value }
  end
  while i <= n do
    local c = sub(src, i, i)
    if find(c, "^%s") then
      i = i + 1
    elseif sub(src, i, i + 1) == "--" then -- comment: long or to the end of the line
      local level, close = match(src, "^%[(=*)%[", i + 2), nil
      if level then
        close = select(2, find(src, "]" .. level .. "]", i + 2, true))
      else
        close = find(src, "\n", i, true)
      end
      if not close then return toks, "comment" end
      i = close + 1
    elseif find(c, "^[%a_]") then
      local _, e = find(src, "^[%w_]*", i + 1)
      push("name", i, e)
      i = e + 1
    elseif find(c, "^%d") or find(src, "^%.%d", i) then
      local e, more = i, true
      while more do -- digits, letters, dots and signed exponents
        e = select(2, find(src, "^[%w_.]*", e + 1))
        more = find(src, "^[eEpP][+-]", e) ~= nil
        if more then e = e + 1 end
      end
      push("number", i, e, tonumber(sub(src, i, e)))
      i = e + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while true do
        local k = find(src, "[\\\n" .. c .. "]", j)
        if not k then return toks, "string", c, i end
        local ck = sub(src, k, k)
        if ck == "\\" then
          j = k + 2
        else -- closing quote, or a newline ending a broken string
          local body = sub(src, i + 1, k - 1)
          push("string", i, k, not find(body, "\\", 1, true) and ck == c and body or nil)
          i = k + 1
          break
        end
      end
    elseif c == "[" and find(src, "^%[=*%[", i) then -- long string
      local level = match(src, "^%[(=*)%[", i)
      local open_end = i + #level + 1
      local close = find(src, "]" .. level .. "]", open_end + 1, true)
      if not close then return toks, "longstring" end
      push("string", i, close + #level + 1, sub(src, open_end + 1, close - 1))
      i = close + #level + 2
    else
      local op = match(src, "^%.%.%.", i) or match(src, "^%.%.", i) or match(src, "^::", i) or c
      push("op", i, i + #op - 1)
      i = i + #op
    end
  end
  return toks, "code"
end

local function is_op(tok, text)
  return tok ~= nil and tok.kind == "op" and tok.text == text
end

-- Reads an access chain such as `a.b["c"][1].d` backwards from token i.
-- Returns its keys, root first, and the byte position where it starts; nil if the
-- tokens do not end in such a chain (calls, `:` inside, keywords, literals).
local function chain_back(toks, i)
  local keys, start = {}, nil
  while true do
    local t = toks[i]
    if t == nil then return nil end
    if t.kind == "name" and not KEYWORDS[t.text] then
      table.insert(keys, 1, t.text)
      start = t.s
      if is_op(toks[i - 1], ".") then
        i = i - 2
      elseif is_op(toks[i - 1], ":") then
        return nil
      else
        return keys, start
      end
    elseif is_op(t, "]") and is_op(toks[i - 2], "[") then
      local k = toks[i - 1]
      local key = k.kind == "string" and k.value
                  or k.kind == "number" and math.tointeger(k.value)
      if not key then return nil end
      table.insert(keys, 1, key)
      i = i - 3
      if is_op(toks[i], ".") or is_op(toks[i], ":") then return nil end
    else
      return nil
    end
  end
end

-- The `__index` table of v's metatable (read raw through the host's getter), or nil.
local function index_table(v, gm)
  if not gm then return nil end
  local mt = gm(v)
  if type(mt) ~= "table" then return nil end
  local idx = rawget(mt, "__index")
  return type(idx) == "table" and idx or nil
end

-- v[k] as Lua would find it through `__index` tables, without calling anything.
local function lookup(v, k, gm)
  for _ = 1, MAX_HOPS do
    local tv = type(v)
    if tv == "table" then
      local x = rawget(v, k)
      if x ~= nil then return x end
    elseif tv ~= "userdata" and tv ~= "string" then
      return nil
    end
    v = index_table(v, gm)
    if v == nil then return nil end
  end
  return nil
end

-- The string-keyed members of v: raw fields, then those of its `__index` tables.
local function members(v, gm)
  local found = {}
  for _ = 1, MAX_HOPS do
    local tv = type(v)
    if tv == "table" then
      local k, x = next(v)
      while k ~= nil do
        if type(k) == "string" and found[k] == nil then found[k] = x end
        k, x = next(v, k)
      end
    elseif tv ~= "userdata" and tv ~= "string" then
      break
    end
    v = index_table(v, gm)
    if v == nil then break end
  end
  return found
end

-- Whether member name k is offered for the typed prefix: it must start with it, and
-- `_`-names only when the prefix starts with `_`.
local function offered(k, prefix)
  return starts_with(k, prefix) and (byte(k) ~= 95 or byte(prefix) == 95)
end

-- Sorted list of the keys of a set.
local function sorted_keys(set)
  local list = {}
  for k in next, set do list[#list + 1] = k end
  sort(list, bytes_less)
  return list
end

-- Resolves the keys of a chain from env; nil when a step is missing.
local function resolve(env, keys, gm)
  local v = env
  for i = 1, #keys do
    v = lookup(v, keys[i], gm)
    if v == nil then return nil end
  end
  return v
end

-- Completion inside a short string: module names after `require`, or table keys
-- after `t[`.
local function complete_string(text, toks, quote, qpos, env, o)
  local partial = sub(text, qpos + 1)
  if find(partial, "\\", 1, true) then return nil end
  local prev = toks[#toks]
  local callee = is_op(prev, "(") and toks[#toks - 1] or prev
  if callee and callee.kind == "name" and callee.text == "require" then
    local set = {}
    for _, m in next, type(o.modules) == "table" and o.modules or {} do
      if type(m) == "string" and starts_with(m, partial) then set[m] = true end
    end
    return sorted_keys(set), qpos + 1
  end
  if not is_op(prev, "[") then return nil end
  local keys, start = chain_back(toks, #toks - 1)
  if not keys then return nil end
  local v = resolve(env, keys, o.getmetatable)
  if v == nil then return nil end
  local head, set = sub(text, start, qpos - 1), {}
  for k in next, members(v, o.getmetatable) do
    if offered(k, partial) then
      set[head .. quote .. escape_body(k, quote) .. quote .. "]"] = true
    end
  end
  return sorted_keys(set), start
end

local function complete(line, cursor, env, opts)
  if type(line) ~= "string" then return nil end
  cursor = math.tointeger(cursor) or #line + 1
  cursor = math.max(1, math.min(cursor, #line + 1))
  local text = sub(line, 1, cursor - 1)
  local o = options(opts)
  local gm = o.getmetatable
  local toks, state, quote, qpos = lex(text)
  if state == "string" then return complete_string(text, toks, quote, qpos, env, o) end
  if state ~= "code" then return nil end

  -- the partial word being typed (possibly empty) and where it starts
  local last, i, prefix, pstart = toks[#toks], #toks, "", #text + 1
  if last and last.e == #text then
    if last.kind == "name" then
      prefix, pstart, i = last.text, last.s, #toks - 1
    elseif last.kind ~= "op" then
      return nil -- right after a number or a string
    end
  end

  local set = {}
  local sep = toks[i]
  if is_op(sep, ".") or is_op(sep, ":") then
    local keys, start = chain_back(toks, i - 1)
    if not keys then return nil end
    local v = resolve(env, keys, gm)
    if v == nil then return nil end
    local head = sub(text, start, pstart - 1)
    for k, x in next, members(v, gm) do
      if is_identifier(k) and offered(k, prefix)
          and (sep.text == "." or type(x) == "function") then
        set[head .. k] = true
      end
    end
    return sorted_keys(set), start
  end

  -- a plain word: globals and keywords
  if type(env) == "table" then
    for k in next, members(env, gm) do
      if is_identifier(k) and offered(k, prefix) then set[k] = true end
    end
  end
  for k in next, KEYWORDS do
    if starts_with(k, prefix) then set[k] = true end
  end
  return sorted_keys(set), pstart
end

--- Tab completion for the text of line before cursor (a 1-based byte position,
-- default #line + 1), against env (the REPL's globals).
-- opts: getmetatable (raw getter, for userdata, strings and `__index` tables),
-- modules (names offered inside `require "`).
-- Returns the sorted candidates, each a full replacement for the text that starts at
-- the second result (a byte position in line). Never raises: odd input gives {}.
function M.complete(line, cursor, env, opts)
  local ok, list, start = pcall(complete, line, cursor, env, opts)
  if ok and list then return list, start end
  local fallback = math.tointeger(cursor) or (type(line) == "string" and #line + 1) or 1
  return {}, fallback
end

return M
