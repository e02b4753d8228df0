-- lookout._docs: the help system, read from the LuaCATS stubs (`---@meta NAME`).
--
--   D.parse(text [, source])   -> module doc (name, summary, description, functions,
--                                 classes, fields, aliases)
--   D.new()                    -> registry with :add(stub_text [, source]), :entry(name),
--                                 :help(x, opts), :names()
--   D.manual_url(name)         -> Lua 5.4 manual link for a standard library name, or nil
--
-- Pure Lua 5.4; values handed to help() are only compared with rawequal and read
-- with rawget/next.

-- Globals are captured now, so a REPL line that reassigns them cannot break us.
local next, rawget, rawequal, type, tostring, ipairs, pairs = next, rawget, rawequal, type,
  tostring, ipairs, pairs
local getmetatable, setmetatable, pcall, select, error = getmetatable, setmetatable, pcall,
  select, error
local string, table, math, utf8 = string, table, math, utf8

local D = {}

local fmt, sub, find, match, gsub, rep = string.format, string.sub, string.find,
  string.match, string.gsub, string.rep
local concat, insert, sort = table.concat, table.insert, table.sort

local WIDTH = 80
local MANUAL = "https://www.lua.org/manual/5.4/manual.html"

-- Annotation tags LuaLS knows; any other `---@tag` is reported as a typo.
local KNOWN_TAGS = {}
for tag in ([[meta class field param return alias type overload see deprecated nodiscard
              async generic vararg enum private protected package version diagnostic cast
              operator source module as language]]):gmatch("%a+") do
  KNOWN_TAGS[tag] = true
end

---------------------------------------------------------------------------------------------
-- Text helpers
---------------------------------------------------------------------------------------------

local function trim(s)
  return match(s, "^%s*(.-)%s*$")
end

-- Columns a single line takes (one per UTF-8 character).
local function columns(s)
  return utf8.len(s) or #s
end

local function pad(s, width)
  return s .. rep(" ", width - columns(s))
end

-- Byte-wise string order, independent of the C locale.
local function bytes_less(a, b)
  if a == b then return false end
  local n = #a < #b and #a or #b
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local function sorted(list)
  sort(list, bytes_less)
  return list
end

-- Wraps words into lines of at most `width` columns; the first line starts with
-- `first`, the others with `rest`. A word longer than a line gets a line of its own.
local function wrap(text, width, first, rest, out)
  out = out or {}
  local line, empty = first, true
  for word in text:gmatch("%S+") do
    if not empty and columns(line) + 1 + columns(word) > width then
      out[#out + 1] = line
      line, empty = rest, true
    end
    line = empty and line .. word or line .. " " .. word
    empty = false
  end
  if not empty then out[#out + 1] = line end
  return out
end

-- Reflows doc text: paragraphs (separated by blank lines) are wrapped at word
-- boundaries, list items (`- `, `* `, `1. `) get a hanging indent, lines indented by
-- four or more spaces and ``` fenced blocks are kept as they are.
local function reflow(text, width, indent, out)
  out = out or {}
  local para, fenced = nil, false -- para: { first = prefix, rest = prefix, words = {} }
  local function flush()
    if para then
      wrap(concat(para.words, " "), width, para.first, para.rest, out)
      para = nil
    end
  end
  local function blank()
    if #out > 0 and out[#out] ~= "" then out[#out + 1] = "" end
  end
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if find(line, "^%s*```") then
      flush()
      fenced = not fenced
      out[#out + 1] = indent .. line
    elseif fenced or find(line, "^    ") then
      flush()
      out[#out + 1] = indent .. line
    elseif trim(line) == "" then
      flush()
      blank()
    else
      local marker, body = match(line, "^%s*([-*] )(.*)$")
      if not marker then marker, body = match(line, "^%s*(%d+[.)] )(.*)$") end
      if marker then
        flush()
        para = { first = indent .. marker, rest = indent .. rep(" ", #marker), words = { body } }
      else
        para = para or { first = indent, rest = indent, words = {} }
        para.words[#para.words + 1] = trim(line)
      end
    end
  end
  flush()
  while out[#out] == "" do out[#out] = nil end
  return out
end

-- Lines of an aligned table: rows are lists of cells; the last cell is free text wrapped
-- under its column. A cell wider than `cap` sends the text to the next line.
local function aligned(rows, width, indent, cap, out)
  out = out or {}
  cap = cap or 28
  local ncols = 0
  for _, row in ipairs(rows) do ncols = math.max(ncols, #row) end
  local widths = {}
  for c = 1, ncols - 1 do
    widths[c] = 0
    for _, row in ipairs(rows) do
      local w = row[c] and columns(row[c]) or 0
      if w <= cap then widths[c] = math.max(widths[c], w) end
    end
  end
  for _, row in ipairs(rows) do
    local line, overflow = indent, false
    for c = 1, ncols - 1 do
      local cell = row[c] or ""
      if columns(cell) > widths[c] then overflow = true end
      line = line .. (overflow and cell .. "  " or pad(cell, widths[c] + 2))
    end
    local text = row[ncols] or ""
    local column = 0
    for c = 1, ncols - 1 do column = column + widths[c] + 2 end
    local hang = indent .. rep(" ", column)
    local narrow = columns(hang) > width - 20
    if text == "" then
      out[#out + 1] = (gsub(line, "%s+$", ""))
    elseif overflow or narrow then -- the text goes on the next lines
      out[#out + 1] = (gsub(line, "%s+$", ""))
      if narrow then hang = indent .. "    " end
      wrap(text, width, hang, hang, out)
    else
      wrap(text, width, line, hang, out)
    end
  end
  return out
end

---------------------------------------------------------------------------------------------
-- Parsing stubs
---------------------------------------------------------------------------------------------

-- Reads one type expression at the start of s: balanced brackets, unions with `|`,
-- `fun(): T` returns; stops at a blank or `,` outside brackets.
-- Returns the type and the rest of s, or nil.
local OPEN = { ["("] = ")", ["{"] = "}", ["<"] = ">", ["["] = "]" }
local function read_type(s)
  s = match(s, "^%s*(.*)$")
  local depth, i, n = 0, 1, #s
  while i <= n do
    local c = sub(s, i, i)
    if OPEN[c] then
      depth = depth + 1
    elseif c == ")" or c == "}" or c == ">" or c == "]" then
      if depth == 0 then break end
      depth = depth - 1
    elseif c == '"' or c == "'" or c == "`" then -- a literal type such as "get"
      local close = find(s, c, i + 1, true)
      if not close then break end
      i = close
    elseif depth == 0 and (c == "," or find(c, "^%s")) then
      -- blanks continue a type only around `|` and after `:` (fun(): T)
      local j = select(2, find(s, "^%s*", i)) + 1
      local before, after = sub(s, i - 1, i - 1), sub(s, j, j)
      if c == "," or not (before == "|" or before == ":" or after == "|") then break end
      i = j - 1
    end
    i = i + 1
  end
  local t = trim(sub(s, 1, i - 1))
  if t == "" then return nil end
  return t, sub(s, i)
end

-- Description text after a tag: a leading `#` or `@` separator is dropped.
local function desc_text(s)
  return trim((gsub(s or "", "^%s*[#@]", "")))
end

-- Abbreviations whose period does not end a sentence.
local ABBREVIATIONS = { ["e.g"] = true, ["i.e"] = true, etc = true, vs = true, cf = true }

-- Splits text at the end of its first sentence (a `.`, `!` or `?` followed by a blank,
-- outside backticks, not after an abbreviation). Returns the sentence and the rest.
local function first_sentence(text)
  local ticks = false
  for i = 1, #text do
    local c = sub(text, i, i)
    if c == "`" then
      ticks = not ticks
    elseif not ticks and (c == "." or c == "!" or c == "?") and find(text, "^%s", i + 1) then
      local word = match(sub(text, 1, i - 1), "([%w.]*)$")
      if not ABBREVIATIONS[word:lower()] then
        return sub(text, 1, i), trim(sub(text, i + 1))
      end
    end
  end
  return trim(text), ""
end

-- Splits plain doc lines into summary (the first sentence), description (the rest),
-- context and notes. Also returns the whole text (summary and description as written).
local function sections(plain)
  local desc, context, notes = {}, {}, {}
  local cur = desc
  for _, l in ipairs(plain) do
    local c = match(l, "^%s*Context:%s*(.*)$")
    local n = match(l, "^%s*Notes?:%s*(.*)$")
    if c then
      cur = context
      if c ~= "" then cur[#cur + 1] = c end
    elseif n then
      cur = notes
      if n ~= "" then cur[#cur + 1] = n end
    elseif trim(l) == "" and cur == context then
      cur = desc
      desc[#desc + 1] = ""
    else
      cur[#cur + 1] = l
    end
  end
  local function text(lines)
    while #lines > 0 and trim(lines[1]) == "" do table.remove(lines, 1) end
    while #lines > 0 and trim(lines[#lines]) == "" do lines[#lines] = nil end
    return concat(lines, "\n")
  end
  local full = text(desc)
  -- the summary is the first sentence of the first paragraph; the description is the
  -- rest, with its line breaks as written
  local para_end = find(full, "\n%s*\n") or #full + 1
  local sentence, rest = first_sentence(sub(full, 1, para_end - 1))
  local summary = gsub(sentence, "%s*\n%s*", " ")
  local description = trim(rest .. sub(full, para_end))
  return summary, description, trim(concat(context, " ")), text(notes), full
end

-- Parser state shared by the helpers below: the doc being built, the source name, the
-- mapping of stub locals to what they stand for, and pending class binding.
local Parser = {}
Parser.__index = Parser

function Parser:fail(line, msg, ...)
  error(fmt("docs: stub %s, line %d: " .. msg, self.source, line, ...), 0)
end

-- Splits a doc block into plain lines and tags { tag, rest, line }.
function Parser:split(block)
  local plain, tags = {}, {}
  for _, l in ipairs(block) do
    local text = l.text
    local tag, rest = match(text, "^%s*@(%a+)(.*)$")
    if tag then
      if not KNOWN_TAGS[tag] then self:fail(l.line, "unknown tag ---@%s", tag) end
      tags[#tags + 1] = { tag = tag, rest = rest, line = l.line }
    elseif find(text, "^%s*|") then -- `---| "value" # desc` lines of an alias
      tags[#tags + 1] = { tag = "|", rest = match(text, "^%s*|(.*)$"), line = l.line }
    else
      plain[#plain + 1] = (gsub(text, "^ ", "", 1))
    end
  end
  return plain, tags
end

function Parser:param(tag)
  local name, optional, rest = match(tag.rest, "^%s*([%a_][%w_]*)(%??)(.*)$")
  if not name then name, optional, rest = match(tag.rest, "^%s*(%.%.%.)(%??)(.*)$") end
  local ptype, after
  if name then ptype, after = read_type(rest) end
  if not ptype then self:fail(tag.line, "---@param needs a name and a type") end
  return { name = name, type = ptype, desc = desc_text(after), optional = optional == "?" }
end

-- `---@return T [name] [desc]`, also `T1, T2` and `T # desc`; returns a list.
function Parser:returns(tag, into)
  local rest = tag.rest
  while true do
    local rtype, after = read_type(rest)
    if not rtype then self:fail(tag.line, "---@return needs a type") end
    local r = { type = rtype, desc = "" }
    into[#into + 1] = r
    local name, tail = match(after, "^%s+([%a_][%w_]*%??)(.*)$")
    if not name then name, tail = match(after, "^%s+(%.%.%.)(.*)$") end
    if name then r.name, after = name, tail end
    local next_one = match(after, "^%s*,(.*)$")
    if not next_one then
      r.desc = desc_text(after)
      return into
    end
    rest = next_one
  end
end

-- `---@field [scope] name[?] type desc`; returns nil for non-public fields.
function Parser:field(tag)
  local scope, rest = match(tag.rest, "^%s*(%a+)%s+(.*)$")
  if scope == "private" or scope == "protected" or scope == "package" then return nil end
  if scope ~= "public" then rest = tag.rest end
  local name, optional, after = match(rest, "^%s*([%a_][%w_]*)(%??)(.*)$")
  if not name then -- `[string] T` index fields
    name, after = match(rest, "^%s*(%b[])(.*)$")
    optional = ""
  end
  local ftype, tail
  if name then ftype, tail = read_type(after) end
  if not ftype then self:fail(tag.line, "---@field needs a name and a type") end
  return { name = name, type = ftype, desc = desc_text(tail), optional = optional == "?" }
end

-- A `---@class` block: records the class with its fields; returns its name.
function Parser:class(plain, tags, tag)
  local name, parent = match(tag.rest, "^%s*%(?[%a%s,]-%)?%s*([%a_][%w_.]*)%s*:?%s*([%w_.]*)")
  if not name then self:fail(tag.line, "---@class needs a name") end
  local doc = self.doc
  if self.classes_seen[name] then self:fail(tag.line, "class %s is declared twice", name) end
  self.classes_seen[name] = true
  local summary, description = sections(plain)
  local class = { kind = "class", name = name, parent = parent ~= "" and parent or nil,
                  summary = summary, description = description, fields = {}, methods = {},
                  module = doc.name, line = tag.line }
  for _, t in ipairs(tags) do
    if t.tag == "field" then class.fields[#class.fields + 1] = self:field(t) end -- nil: skipped
  end
  return class
end

-- A block followed by `function a.b(x, y)`: one function entry.
function Parser:func(plain, tags, path, args, line)
  local params = {}
  for a in (args .. ","):gmatch("%s*([^,]-)%s*,") do
    if a ~= "" then params[#params + 1] = a end
  end
  local known = {}
  for _, p in ipairs(params) do known[p] = true end
  local summary, description, context, notes, text = sections(plain)
  local f = { kind = "function", path = path, arg_names = params, params = {}, returns = {},
              summary = summary, description = description, context = context,
              notes = notes, text = text, line = line, overloads = {} }
  local documented = {}
  for _, t in ipairs(tags) do
    if t.tag == "param" then
      local p = self:param(t)
      if not known[p.name] then
        self:fail(t.line, "---@param %q is not a parameter of %s(%s)", p.name, path,
                  concat(params, ", "))
      end
      if documented[p.name] then self:fail(t.line, "---@param %q is given twice", p.name) end
      documented[p.name] = p
      f.params[#f.params + 1] = p
    elseif t.tag == "return" then
      self:returns(t, f.returns)
    elseif t.tag == "overload" then
      f.overloads[#f.overloads + 1] = trim(t.rest)
    elseif t.tag == "deprecated" then
      f.deprecated = desc_text(t.rest) ~= "" and desc_text(t.rest) or true
    elseif t.tag == "see" then
      f.see = trim(t.rest)
    elseif t.tag == "field" or t.tag == "class" or t.tag == "alias" then
      self:fail(t.line, "---@%s cannot document a function", t.tag)
    end
  end
  f.documented = documented
  self.functions[#self.functions + 1] = f
end

-- `---@alias Name type` (with `---| "value" # desc` lines).
function Parser:alias(plain, tags, tag)
  local name, rest = match(tag.rest, "^%s*([%a_][%w_.]*)(.*)$")
  if not name then self:fail(tag.line, "---@alias needs a name") end
  local summary, description = sections(plain)
  local alias = { kind = "alias", name = name, type = read_type(rest) or "", summary = summary,
                  description = description, values = {}, line = tag.line }
  for _, t in ipairs(tags) do
    if t.tag == "|" then
      local value, after = read_type(t.rest)
      if value then alias.values[#alias.values + 1] = { type = value, desc = desc_text(after) } end
    end
  end
  self.doc.aliases[name] = alias
end

-- Handles one doc block (possibly empty) and the code line that follows it.
function Parser:block(block, code, line)
  local plain, tags = self:split(block)
  local has = {}
  for _, t in ipairs(tags) do
    if has[t.tag] and (t.tag == "meta" or t.tag == "class" or t.tag == "alias") then
      self:fail(t.line, "a second ---@%s in one doc block", t.tag)
    end
    has[t.tag] = has[t.tag] or t
  end
  local doc = self.doc
  local code_line = block[#block] and block[#block].line + 1 or line

  if has.meta then
    if doc.name then self:fail(has.meta.line, "a second ---@meta") end
    doc.name = match(has.meta.rest, "^%s*([%w_.%-]+)")
    if not doc.name then self:fail(has.meta.line, "---@meta needs the module name") end
    self.source = fmt("%q", doc.name)
    doc.summary, doc.description = sections(plain)
    self.module_pending = true
    if has.class then -- the module table's own type, e.g. `---@class timerlib`
      local class = self:class({}, tags, has.class)
      doc.module_class = class.name
      for _, f in ipairs(class.fields) do doc.fields[#doc.fields + 1] = f end
    end
  elseif #block > 0 and not doc.name then
    self:fail(block[1].line, "doc comment before ---@meta NAME")
  elseif has.class then
    local class = self:class(plain, tags, has.class)
    doc.classes[class.name] = class
    doc.class_names[#doc.class_names + 1] = class.name
    self.last_class = class.name
    self.module_pending = false -- the next local is this class, not the module
  elseif has.alias then
    self:alias(plain, tags, has.alias)
  end

  -- the code line
  local fpath, args = match(code, "^%s*function%s+([%a_][%w_.:]*)%s*%((.-)%)")
  if not fpath then
    fpath, args = match(code, "^%s*([%a_][%w_.]*)%s*=%s*function%s*%((.-)%)")
  end
  if fpath then
    if not doc.name then self:fail(line, "function before ---@meta NAME") end
    if has.meta or has.class or has.alias then
      self:fail(line, "a function needs its own doc block")
    end
    self:func(plain, tags, fpath, args, line)
    return
  end
  if (has.param or has["return"]) and not has.meta then
    self:fail((has.param or has["return"]).line, "---@%s is not followed by a function",
              has.param and "param" or "return")
  end
  -- a plain block before any function: the module's text when the meta block had none
  local assignment = find(code, "^%s*[%a_][%w_.]*%.[%a_][%w_]*%s*=")
  if #plain > 0 and not (has.meta or has.class or has.alias or has.type or assignment)
      and doc.summary == "" and #self.functions == 0 then
    doc.summary, doc.description = sections(plain)
  end
  local var = match(code, "^%s*local%s+([%a_][%w_]*)%s*=%s*{")
  if var then
    if self.module_pending then
      self.locals[var] = { module = true }
      self.module_pending = false
    elseif self.last_class then
      self.locals[var] = { class = self.last_class }
      self.last_class = nil
    end
    return
  end
  local ret = match(code, "^%s*return%s+([%a_][%w_]*)%s*$")
  if ret then
    self.locals[ret] = { module = true }
    return
  end
  local owner, fname = match(code, "^%s*([%a_][%w_.]*)%.([%a_][%w_]*)%s*=")
  if owner and #block > 0 and not (has.meta or has.class or has.alias) then
    local ftype = has.type and read_type(has.type.rest) or "any"
    local summary, description = sections(plain)
    self.values[#self.values + 1] = { owner = owner, name = fname, type = ftype,
      desc = description ~= "" and summary .. " " .. description or summary, line = code_line }
  end
end

-- Maps a stub path (`Handle:stop`, `timer.after`) to the documented name.
function Parser:qualify(path)
  local root, rest = match(path, "^([%a_][%w_]*)(.*)$")
  local mapped = self.locals[root]
  if mapped and mapped.module then
    root = self.doc.name
  elseif mapped then
    root = mapped.class
  elseif root == self.doc.module_class or root == match(self.doc.name, "([^.]*)$") then
    root = self.doc.name
  end
  return root .. rest
end

-- The signature line: `timer.after(delay, fn, ...) -> timer.Handle`.
local function signature(f)
  local args = {}
  for i, a in ipairs(f.arg_names) do
    local p = f.documented[a]
    args[i] = (p and p.optional) and a .. "?" or a
  end
  local s = f.name .. "(" .. concat(args, ", ") .. ")"
  if #f.returns > 0 then
    local types = {}
    for i, r in ipairs(f.returns) do types[i] = r.type end
    s = s .. " -> " .. concat(types, ", ")
  end
  return s
end

-- Resolves names once the whole stub is read (locals may be bound late by `return`).
function Parser:finish()
  local doc = self.doc
  if not doc.name then self:fail(1, "no ---@meta NAME line") end
  local seen = {}
  for _, f in ipairs(self.functions) do
    f.name = self:qualify(f.path)
    if seen[f.name] then self:fail(f.line, "function %s is documented twice", f.name) end
    seen[f.name] = true
    f.signature = signature(f)
    f.module = doc.name
    local owner, sep = match(f.name, "^(.*)([.:])[%a_][%w_]*$")
    local class = owner and doc.classes[owner]
    if class then
      f.class = class.name
      f.method = sep == ":"
      class.methods[#class.methods + 1] = f
    end
    f.path, f.documented = nil, nil
    doc.functions[#doc.functions + 1] = f
  end
  for _, v in ipairs(self.values) do
    local owner = self:qualify(v.owner)
    local field = { name = v.name, type = v.type, desc = v.desc }
    if owner == doc.name then
      doc.fields[#doc.fields + 1] = field
    elseif doc.classes[owner] then
      insert(doc.classes[owner].fields, field)
    end
  end
  return doc
end

--- Parses one stub. Raises "docs: stub NAME, line N: …" for a malformed stub.
function D.parse(text, source)
  if type(text) ~= "string" then error("docs: a stub must be a string", 2) end
  local p = setmetatable({
    doc = { kind = "module", summary = "", description = "", functions = {}, classes = {},
            class_names = {}, fields = {}, aliases = {} },
    source = fmt("%q", source or "?"), locals = {}, functions = {}, values = {},
    classes_seen = {},
  }, Parser)
  local block, lineno = {}, 0
  for raw in (gsub(text, "\r\n", "\n") .. "\n"):gmatch("(.-)\n") do
    lineno = lineno + 1
    local doc_text = match(raw, "^%s*%-%-%-(.*)$")
    if doc_text and not find(doc_text, "^%-") then -- `----` rules are not doc lines
      block[#block + 1] = { text = doc_text, line = lineno }
    else
      p:block(block, raw, lineno)
      block = {}
    end
  end
  if #block > 0 then p:block(block, "", lineno) end
  return p:finish()
end

---------------------------------------------------------------------------------------------
-- Lua's standard library: names link to the 5.4 manual
---------------------------------------------------------------------------------------------

local STD_SECTIONS = {
  _G = "6.1", coroutine = "6.2", package = "6.3", string = "6.4", utf8 = "6.5",
  table = "6.6", math = "6.7", io = "6.8", os = "6.9", debug = "6.10",
}
local STD_NAMES = {}
for name in ([[
  assert collectgarbage dofile error getmetatable ipairs load loadfile next pairs pcall
  print rawequal rawget rawlen rawset require select setmetatable tonumber tostring type
  xpcall warn _G _VERSION
  coroutine.close coroutine.create coroutine.isyieldable coroutine.resume
  coroutine.running coroutine.status coroutine.wrap coroutine.yield
  package.config package.cpath package.loaded package.loadlib package.path
  package.preload package.searchers package.searchpath
  string.byte string.char string.dump string.find string.format string.gmatch
  string.gsub string.len string.lower string.match string.pack string.packsize
  string.rep string.reverse string.sub string.unpack string.upper
  utf8.char utf8.charpattern utf8.codepoint utf8.codes utf8.len utf8.offset
  table.concat table.insert table.move table.pack table.remove table.sort table.unpack
  math.abs math.ceil math.cos math.deg math.exp math.floor math.fmod math.huge
  math.log math.max math.maxinteger math.min math.mininteger math.modf math.pi
  math.rad math.random math.randomseed math.sin math.sqrt math.tan math.tointeger
  math.type math.ult math.acos math.asin math.atan
  io.close io.flush io.input io.lines io.open io.output io.popen io.read io.stderr
  io.stdin io.stdout io.tmpfile io.type io.write
  os.clock os.date os.difftime os.execute os.exit os.getenv os.remove os.rename
  os.setlocale os.time os.tmpname
  debug.debug debug.gethook debug.getinfo debug.getlocal debug.getmetatable
  debug.getregistry debug.getupvalue debug.getuservalue debug.sethook debug.setlocal
  debug.setmetatable debug.setupvalue debug.setuservalue debug.traceback
  debug.upvalueid debug.upvaluejoin
]]):gmatch("%S+") do
  STD_NAMES[name] = true
end

--- The Lua 5.4 manual address for a standard library name ("print", "string.format",
-- "string"), or nil.
function D.manual_url(name)
  if STD_NAMES[name] then return MANUAL .. "#pdf-" .. name end
  if STD_SECTIONS[name] then return MANUAL .. "#" .. STD_SECTIONS[name] end
  return nil
end

local function std_help(name)
  if STD_SECTIONS[name] and not STD_NAMES[name] then
    return fmt("%s: Lua standard library (manual §%s)\n%s", name, STD_SECTIONS[name],
               D.manual_url(name))
  end
  return fmt("%s: Lua standard library\n%s", name, D.manual_url(name))
end

---------------------------------------------------------------------------------------------
-- Rendering help pages
---------------------------------------------------------------------------------------------

-- "name — summary" heading, wrapped.
local function heading(name, summary, width, out)
  if summary == "" then
    out[#out + 1] = name
  else
    wrap(name .. " — " .. summary, width, "", rep(" ", math.min(columns(name) + 3, 20)), out)
  end
end

local function section(title, out)
  out[#out + 1] = ""
  out[#out + 1] = title
end

local function field_rows(fields)
  local rows = {}
  for i, f in ipairs(fields) do
    rows[i] = { f.name .. (f.optional and "?" or ""), f.type, f.desc or "" }
  end
  return rows
end

local function render_function(f, width)
  local out = {}
  wrap(f.signature, width, "", "    ", out)
  if f.deprecated then
    out[#out + 1] = ""
    wrap("Deprecated." .. (f.deprecated ~= true and " " .. f.deprecated or ""), width, "", "", out)
  end
  if f.text ~= "" then -- summary and description, as written
    out[#out + 1] = ""
    reflow(f.text, width, "", out)
  end
  if #f.params > 0 then
    section("Parameters:", out)
    local rows = {}
    for i, p in ipairs(f.params) do
      rows[i] = { p.name .. (p.optional and "?" or ""), p.type, p.desc }
    end
    aligned(rows, width, "  ", 28, out)
  end
  if #f.returns > 0 then
    section("Returns:", out)
    local rows, named = {}, false
    for _, r in ipairs(f.returns) do named = named or r.name ~= nil end
    for i, r in ipairs(f.returns) do
      rows[i] = named and { r.type, r.name or "", r.desc } or { r.type, r.desc }
    end
    aligned(rows, width, "  ", 28, out)
  end
  if f.context ~= "" then
    out[#out + 1] = ""
    wrap("Context: " .. f.context, width, "", "  ", out)
  end
  if f.notes ~= "" then
    section("Notes:", out)
    reflow(f.notes, width, "  ", out)
  end
  if #f.overloads > 0 then
    section("Also callable as:", out)
    for _, o in ipairs(f.overloads) do out[#out + 1] = "  " .. o end
  end
  if f.see then
    out[#out + 1] = ""
    out[#out + 1] = "See also: " .. f.see
  end
  return concat(out, "\n")
end

-- The methods of a class as rows `  :stop   summary` (static functions as `.new`).
local function method_rows(class, rows, indent)
  for _, m in ipairs(class.methods) do
    rows[#rows + 1] = { indent .. sub(m.name, #class.name + 1), m.summary }
  end
  return rows
end

local function render_class(c, width)
  local out = {}
  heading(c.name, c.summary, width, out)
  if c.parent then out[#out + 1] = "(a kind of " .. c.parent .. ")" end
  if c.description ~= "" then
    out[#out + 1] = ""
    reflow(c.description, width, "", out)
  end
  if #c.fields > 0 then
    section("Fields:", out)
    aligned(field_rows(c.fields), width, "  ", 28, out)
  end
  if #c.methods > 0 then
    section("Methods:", out)
    local rows = {}
    for i, m in ipairs(c.methods) do rows[i] = { m.name, m.summary } end
    aligned(rows, width, "  ", 36, out)
  end
  return concat(out, "\n")
end

local function render_module(m, width)
  local out = {}
  heading(m.name, m.summary, width, out)
  if m.description ~= "" then
    out[#out + 1] = ""
    reflow(m.description, width, "", out)
  end
  local rows = {}
  for _, f in ipairs(m.functions) do
    if not f.class then rows[#rows + 1] = { f.name, f.summary } end
  end
  if #rows > 0 then
    section("Functions:", out)
    aligned(rows, width, "  ", 36, out)
  end
  if #m.fields > 0 then
    section("Fields:", out)
    local frows = field_rows(m.fields)
    for _, r in ipairs(frows) do r[1] = m.name .. "." .. r[1] end
    aligned(frows, width, "  ", 36, out)
  end
  if #m.class_names > 0 then
    section("Classes:", out)
    local crows = {}
    for _, name in ipairs(m.class_names) do
      local c = m.classes[name]
      crows[#crows + 1] = { c.name, c.summary }
      method_rows(c, crows, "  ")
    end
    aligned(crows, width, "  ", 36, out)
  end
  local first = m.functions[1]
  if first then
    out[#out + 1] = ""
    wrap(fmt('Use help "%s" or help(%s) for the details of a function.', first.name,
             first.name), width, "", "", out)
  end
  return concat(out, "\n")
end

local function render_alias(a, width)
  local out = {}
  heading(a.name, a.summary ~= "" and a.summary or a.type, width, out)
  if a.summary ~= "" and a.type ~= "" then out[#out + 1] = "type: " .. a.type end
  if a.description ~= "" then
    out[#out + 1] = ""
    reflow(a.description, width, "", out)
  end
  if #a.values > 0 then
    section("Values:", out)
    local rows = {}
    for i, v in ipairs(a.values) do rows[i] = { v.type, v.desc } end
    aligned(rows, width, "  ", 28, out)
  end
  return concat(out, "\n")
end

---------------------------------------------------------------------------------------------
-- Finding names
---------------------------------------------------------------------------------------------

-- Levenshtein distance between two short strings.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    local ca = string.byte(a, i)
    for j = 1, #b do
      local cost = (ca == string.byte(b, j)) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

local function last_segment(name)
  return match(name, "([^.:]*)$")
end

-- Up to five names close to `query`: the same prefix, or a small edit distance
-- (of the whole name, or of the last part when the query has no module).
local function suggestions(query, names)
  local q = query:lower()
  local limit = #q <= 4 and 1 or 2
  local scored = {}
  for _, name in ipairs(names) do
    local n = name:lower()
    local score
    if #q >= 2 and sub(n, 1, #q) == q then
      score = 0
    elseif math.abs(#n - #q) <= limit and distance(q, n) <= limit then
      score = distance(q, n)
    elseif not find(q, "[.:]") and find(n, "[.:]") then
      local seg = last_segment(n)
      if #q >= 3 and sub(seg, 1, #q) == q then
        score = 1
      elseif math.abs(#seg - #q) <= limit and distance(q, seg) <= limit then
        score = distance(q, seg) + 1
      end
    end
    if not score and find(q, "[.:]") and #n > #q and sub(n, -#q) == q
        and find(sub(n, -#q - 1, -#q - 1), "[.:]") then
      score = 1 -- the query is the tail of a name: "Task:cancel"
    end
    if score then scored[#scored + 1] = { name = name, score = score } end
  end
  sort(scored, function(a, b)
    if a.score ~= b.score then return a.score < b.score end
    if #a.name ~= #b.name then return #a.name < #b.name end
    return bytes_less(a.name, b.name)
  end)
  local out = {}
  for i = 1, math.min(5, #scored) do out[i] = scored[i].name end
  return out
end

---------------------------------------------------------------------------------------------
-- The registry
---------------------------------------------------------------------------------------------

local Registry = {}
Registry.__index = Registry

--- A new, empty help registry.
function D.new()
  return setmetatable({ modules = {}, entries = {}, sources = {} }, Registry)
end

--- Adds one stub; raises for a malformed stub or a name documented twice.
function Registry:add(text, source)
  local doc = D.parse(text, source)
  local where = fmt("docs: stub %q", doc.name)
  local function register(name, entry)
    if self.entries[name] then
      error(fmt("%s, line %d: %s is already documented", where, entry.line or 1, name), 0)
    end
    self.entries[name] = entry
  end
  register(doc.name, doc)
  self.modules[doc.name] = doc
  for _, name in ipairs(doc.class_names) do register(name, doc.classes[name]) end
  for name, alias in pairs(doc.aliases) do register(name, alias) end
  for _, f in ipairs(doc.functions) do register(f.name, f) end
  return doc
end

-- Spellings tried for a name: as given, without "()" , with or without "lookout.",
-- and with the last `.`/`:` swapped.
local function variants(name)
  name = gsub(trim(name), "%(%)$", "")
  local list = { name }
  local bare = match(name, "^lookout%.(.+)$")
  list[#list + 1] = bare or "lookout." .. name
  for i = 1, 2 do
    local n = list[i]
    local head, sep, tail = match(n, "^(.*)([.:])([^.:]+)$")
    if head then list[#list + 1] = head .. (sep == "." and ":" or ".") .. tail end
  end
  return list
end

--- The doc entry (module, class, alias or function) for a name, or nil.
-- Every entry has `kind`: "module", "class", "alias" or "function".
function Registry:entry(name)
  if type(name) ~= "string" then return nil end
  for _, n in ipairs(variants(name)) do
    local e = self.entries[n]
    if e then return e end
    for _, m in pairs(self.modules) do -- the module table's own class name
      if m.module_class == n then return m end
    end
  end
  return nil
end

--- All documented function names, sorted.
function Registry:names()
  local list = {}
  for name, e in pairs(self.entries) do
    if e.kind == "function" then list[#list + 1] = name end
  end
  return sorted(list)
end

-- Sorted keys of a table (read with next), strings only.
local function string_keys(t)
  local list = {}
  if type(t) ~= "table" then return list end
  local k = next(t)
  while k ~= nil do
    if type(k) == "string" then list[#list + 1] = k end
    k = next(t, k)
  end
  return sorted(list)
end

-- Names under which a value is reachable from opts.roots (one level deep), the
-- methods tables in opts.classes, or its metatable (`__name`, `__index`).
function Registry:names_of(x, opts)
  local found = {}
  local roots, classes = opts.roots, opts.classes
  for _, root in ipairs(string_keys(roots)) do
    local v = rawget(roots, root)
    if rawequal(v, x) then found[#found + 1] = root end
  end
  for _, root in ipairs(string_keys(roots)) do
    local v = rawget(roots, root)
    if type(v) == "table" then
      for _, k in ipairs(string_keys(v)) do
        if rawequal(rawget(v, k), x) then found[#found + 1] = root .. "." .. k end
      end
    end
  end
  for _, class in ipairs(string_keys(classes)) do
    local methods = rawget(classes, class)
    if type(methods) == "table" then
      if rawequal(methods, x) then found[#found + 1] = class end
      for _, k in ipairs(string_keys(methods)) do
        if rawequal(rawget(methods, k), x) then
          found[#found + 1] = class .. ":" .. k
          found[#found + 1] = class .. "." .. k
        end
      end
    end
  end
  local tx = type(x)
  if opts.getmetatable and (tx == "table" or tx == "userdata") then
    local mt = opts.getmetatable(x)
    if type(mt) == "table" then
      local name, index = rawget(mt, "__name"), rawget(mt, "__index")
      if type(name) == "string" then found[#found + 1] = name end
      for _, class in ipairs(string_keys(classes)) do
        if index ~= nil and rawequal(rawget(classes, class), index) then
          found[#found + 1] = class
        end
      end
    end
  end
  return found
end

-- A short label for a value with no help (never calls a metamethod).
local function value_label(x, opts)
  if opts.tostring then
    local ok, s = pcall(opts.tostring, x)
    if ok and type(s) == "string" then return s end
  end
  local tx = type(x)
  if tx == "number" or tx == "boolean" or getmetatable(x) == nil then return tostring(x) end
  return fmt("%s: %p", tx, x)
end

function Registry:overview(width)
  local out = { "Lookout help" }
  local names = {}
  for name in pairs(self.modules) do names[#names + 1] = name end
  sorted(names)
  if #names > 0 then
    section("Modules:", out)
    local rows = {}
    for i, name in ipairs(names) do rows[i] = { name, self.modules[name].summary } end
    aligned(rows, width, "  ", 28, out)
  end
  -- examples taken from the documented names
  local module = self.modules[names[1]]
  local func = module and module.functions[1]
  local text = "help(x) shows the documentation of a module, function, class or value"
  if func then
    text = text .. fmt(", e.g. help(%s) or help(%s); names work too: help %q.",
                       module.name, func.name, func.name)
  else
    text = text .. "."
  end
  out[#out + 1] = ""
  wrap(text, width, "", "", out)
  wrap('For Lua\'s standard library, help "string.format" links to the Lua 5.4 manual.',
       width, "", "", out)
  return concat(out, "\n")
end

function Registry:unknown(query)
  local names = {}
  for name in pairs(self.entries) do names[#names + 1] = name end
  for name in pairs(STD_NAMES) do names[#names + 1] = name end
  local near = suggestions(query, sorted(names))
  if #near == 0 then
    return fmt("no help for %q; try help() for a list of modules", query)
  end
  for i, n in ipairs(near) do near[i] = fmt("help %q", n) end
  return fmt("no help for %q; try %s", query, concat(near, ", "))
end

-- Renders the page of one entry.
local function render(e, width)
  if e.kind == "function" then return render_function(e, width) end
  if e.kind == "class" then return render_class(e, width) end
  if e.kind == "alias" then return render_alias(e, width) end
  return render_module(e, width)
end

--- Help text for x: a name, or a value found through opts.roots / opts.classes.
-- With x nil: an overview of all modules.
-- opts: width (80), roots (name → value), classes (class name → methods table),
-- getmetatable (raw getter), tostring (protected tostring).
function Registry:help(x, opts)
  opts = opts or {}
  local width = opts.width or WIDTH
  if x == nil then return self:overview(width) end
  if type(x) == "string" then
    local e = self:entry(x)
    if e then return render(e, width) end
    local name = gsub(trim(x), "%(%)$", "")
    if D.manual_url(name) then return std_help(name) end
    return self:unknown(x)
  end
  local found = self:names_of(x, opts)
  for _, name in ipairs(found) do
    local e = self:entry(name)
    if e then return render(e, width) end
  end
  for _, name in ipairs(found) do
    if D.manual_url(name) then return std_help(name) end
  end
  return fmt("no help for %s; try help() for a list of modules", value_label(x, opts))
end

return D
