-- lookout._docs.stubs: reads a LuaCATS stub (`---@meta NAME`) into a module doc: name,
-- summary, description, functions, classes, fields and aliases.
-- Part of lookout._docs (docs.lua); pure Lua 5.4.

local ipairs, type, setmetatable, select, error = ipairs, type, setmetatable, select, error
local string, table = string, table
local fmt, sub, find, match, gsub = string.format, string.sub, string.find, string.match,
  string.gsub
local concat, insert = table.concat, table.insert
local trim = require("lookout._docs.text").trim

-- Annotation tags LuaLS knows; any other `---@tag` is reported as a typo.
local KNOWN_TAGS = {}
for tag in ([[meta class field param return alias type overload see deprecated nodiscard
              async generic vararg enum private protected package version diagnostic cast
              operator source module as language]]):gmatch("%a+") do
  KNOWN_TAGS[tag] = true
end

local D = {}

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
    elseif cur == context and (trim(l) == "" or find(l, "^%s*```") or find(l, "^    ")) then
      -- a blank line or a code example ends the context line (the context is one paragraph,
      -- wrapped; an example after it keeps its lines, in the description)
      cur = desc
      desc[#desc + 1] = ""
      if trim(l) ~= "" then desc[#desc + 1] = l end
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

return D.parse
