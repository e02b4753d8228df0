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

local fmt, match, gsub = string.format, string.match, string.gsub
local concat = table.concat

local WIDTH = 80

local T = require("lookout._docs.text")
local trim, sorted, wrap, aligned = T.trim, T.sorted, T.wrap, T.aligned
local stdlib = require("lookout._docs.stdlib")
local std_help, STD_NAMES = stdlib.help, stdlib.names
local render_parts = require("lookout._docs.render")
local section, render_function, render_class, render_module, render_alias =
  render_parts.section, render_parts.render_function, render_parts.render_class,
  render_parts.render_module, render_parts.render_alias
local suggestions = require("lookout._docs.names")

--- Parses one stub. Raises "docs: stub NAME, line N: …" for a malformed stub.
D.parse = require("lookout._docs.stubs")

--- The Lua 5.4 manual address for a standard library name ("print", "string.format",
-- "string"), or nil.
D.manual_url = stdlib.manual_url

---------------------------------------------------------------------------------------------
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

--- The documented class of a host object type ("lookout.nightscout.client" →
-- "nightscout.Client": the type name without "lookout.", compared without case), or nil.
function Registry:class_for_type(tname)
  if type(tname) ~= "string" then return nil end
  local want = string.lower(match(tname, "^lookout%.(.+)$") or tname)
  for name, e in pairs(self.entries) do
    if e.kind == "class" and string.lower(name) == want then return name end
  end
  return nil
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
      -- the documented class first: `home` is a nightscout.Client, not nightscout.client()
      local name, index = rawget(mt, "__name"), rawget(mt, "__index")
      found[#found + 1] = self:class_for_type(name)
      for _, class in ipairs(string_keys(classes)) do
        if index ~= nil and rawequal(rawget(classes, class), index) then
          found[#found + 1] = class
        end
      end
      if type(name) == "string" then found[#found + 1] = name end
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

function Registry:overview(width, reachable)
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
  -- examples taken from the documented names: help(x) only for a module the caller can
  -- reach by its name (opts.reachable), else by name in quotes
  local module, by_value = nil, false
  for _, name in ipairs(names) do
    local m = self.modules[name]
    if m.functions[1] and (reachable == nil or reachable(name)) then module, by_value = m, true break end
  end
  if not module then
    for _, name in ipairs(names) do
      if self.modules[name].functions[1] then module = self.modules[name] break end
    end
  end
  local func = module and module.functions[1]
  local text = "help(x) shows the documentation of a module, function, class or value"
  if func and by_value then
    text = text .. fmt(", e.g. help(%s) or help(%s); names work too: help %q.",
                       module.name, func.name, func.name)
  elseif func then
    text = text .. fmt(', e.g. help %q or help %q.', module.name, func.name)
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
  if x == nil then return self:overview(width, opts.reachable) end
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
