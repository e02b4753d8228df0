-- Tests for lookout._docs: stub parsing, the registry and help() pages.
local docs = require "lookout._docs"

local T = {}

-- assert that actual == expected, showing both (multi-line values on their own lines)
local function eq(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s\nexpected:\n%s\nactual:\n%s", what or "mismatch",
                        tostring(expected), tostring(actual)), 2)
  end
end

-- assert that calling fn raises an error containing `fragment` (plain text)
local function raises(fn, fragment, what)
  local ok, err = pcall(fn)
  assert(not ok, (what or "call") .. ": expected an error containing " .. fragment)
  assert(tostring(err):find(fragment, 1, true),
         string.format("%s\nexpected an error containing:\n%s\nactual:\n%s", what or "error",
                       fragment, tostring(err)))
end

local TIMER = [[
---@meta timer
--- Run a function later, or every interval.
---
--- Timers are kept alive by the host until they fire, are stopped, or the script ends:
--- you do not need to keep the handle in a variable.
---@class timerlib
---@field resolution number smallest interval in seconds
local timer = {}

--- Runs `fn` once after `delay`.
--- Context: anywhere.
---@param delay number|string seconds, or a duration such as "90s", "5m", "1h"
---@param fn fun(...) called as a new task
---@param ... any passed to `fn`
---@return timer.Handle handle
function timer.after(delay, fn, ...) end

--- Runs `fn` every `interval`. The first run comes after one interval; a run that is
--- still going when the next tick comes makes the timer skip that tick.
---
--- A repeating timer stops after 5 failed runs in a row.
--- Context: anywhere.
--- Notes: `opts` may come before `fn`.
--- Use `{continue_on_error = true}` to keep a failing timer going.
---@param interval number|string seconds or a duration
---@param opts? {continue_on_error?: boolean} options
---@param fn fun(...) called as a new task each time
---@return timer.Handle handle
function timer.every(interval, opts, fn) end

---@class timer.Handle
--- A running timer.
---@field id integer unique within the script
local Handle = {}

--- Stops the timer; a running callback finishes.
---@return boolean stopped false if it had already stopped
function Handle:stop() end

return timer
]]

local JSON = [[
---@meta json
--- Encode and decode JSON.
local json = {}

--- Encodes a value as JSON text, e.g. a table.
---@param value any
---@param opts? {indent?: string, sort_keys?: boolean}
---@return string? text, string? err # the text, or nil and a message
function json.encode(value, opts) end

--- Decodes JSON text.
---@param text string
---@return any value
function json.decode(text) end

--- A value that encodes as `null`.
---@type lightuserdata
json.null = nil

---@alias json.Mode
---| "strict" # reject comments
---| "lenient" # accept comments

return json
]]

local function registry()
  local r = docs.new()
  r:add(TIMER)
  r:add(JSON)
  return r
end

local function names_of(list)
  local out = {}
  for i, e in ipairs(list) do out[i] = e.name end
  return table.concat(out, " ")
end

---------------------------------------------------------------------------------------------
-- parse
---------------------------------------------------------------------------------------------

function T.test_parse_module()
  local m = docs.parse(TIMER)
  eq(m.name, "timer", "name")
  eq(m.kind, "module", "kind")
  eq(m.summary, "Run a function later, or every interval.", "summary")
  eq(m.description, "Timers are kept alive by the host until they fire, are stopped, or the "
     .. "script ends:\nyou do not need to keep the handle in a variable.", "description")
  eq(names_of(m.functions), "timer.after timer.every timer.Handle:stop", "functions in order")
  eq(m.fields[1].name, "resolution", "module field from its class block")
  eq(m.fields[1].type, "number", "module field type")
end

function T.test_parse_function()
  local f = docs.parse(TIMER).functions[1]
  eq(f.name, "timer.after", "name")
  eq(f.summary, "Runs `fn` once after `delay`.", "summary")
  eq(f.description, "", "no description")
  eq(f.context, "anywhere.", "context")
  eq(f.notes, "", "no notes")
  eq(f.signature, "timer.after(delay, fn, ...) -> timer.Handle", "signature")
  eq(#f.params, 3, "three params")
  eq(f.params[1].name, "delay", "param 1 name")
  eq(f.params[1].type, "number|string", "param 1 type")
  eq(f.params[1].desc, 'seconds, or a duration such as "90s", "5m", "1h"', "param 1 desc")
  eq(f.params[2].type, "fun(...)", "function type")
  eq(f.params[2].desc, "called as a new task", "param 2 desc")
  eq(f.params[3].name, "...", "vararg")
  eq(f.params[3].type, "any", "vararg type")
  eq(#f.returns, 1, "one return")
  eq(f.returns[1].type, "timer.Handle", "return type")
  eq(f.returns[1].name, "handle", "return name")
  eq(f.returns[1].desc, "", "return desc")
end

function T.test_parse_sections()
  local f = docs.parse(TIMER).functions[2]
  eq(f.summary, "Runs `fn` every `interval`.", "summary is the first sentence")
  eq(f.description, "The first run comes after one interval; a run that is\nstill going when "
     .. "the next tick comes makes the timer skip that tick.\n\nA repeating timer stops after 5 "
     .. "failed runs in a row.", "description keeps its paragraphs")
  eq(f.context, "anywhere.", "context")
  eq(f.notes, "`opts` may come before `fn`.\nUse `{continue_on_error = true}` to keep a failing "
     .. "timer going.", "notes")
  eq(f.params[2].name, "opts", "optional param name without ?")
  assert(f.params[2].optional, "optional param")
  eq(f.params[2].type, "{continue_on_error?: boolean}", "table type")
  eq(f.signature, "timer.every(interval, opts?, fn) -> timer.Handle", "optional in signature")
end

function T.test_parse_classes_and_methods()
  local m = docs.parse(TIMER)
  local c = m.classes["timer.Handle"]
  assert(c, "class timer.Handle")
  eq(c.summary, "A running timer.", "class summary")
  eq(#c.fields, 1, "one field")
  eq(c.fields[1].name, "id", "field name")
  eq(c.fields[1].type, "integer", "field type")
  eq(c.fields[1].desc, "unique within the script", "field desc")
  eq(names_of(c.methods), "timer.Handle:stop", "methods named by the class")
  local stop = c.methods[1]
  eq(stop.signature, "timer.Handle:stop() -> boolean", "method signature")
  eq(stop.class, "timer.Handle", "method class")
  assert(stop.method, "called with ':'")
  eq(stop.returns[1].desc, "false if it had already stopped", "return desc")
  eq(m.classes.timerlib, nil, "the module's own class is not listed")
end

function T.test_parse_types_and_returns()
  local m = docs.parse(JSON)
  local enc = m.functions[1]
  eq(enc.summary, "Encodes a value as JSON text, e.g. a table.", "'e.g.' does not end a sentence")
  eq(enc.params[2].type, "{indent?: string, sort_keys?: boolean}", "table type with commas")
  eq(#enc.returns, 2, "two returns on one line")
  eq(enc.returns[1].type .. " " .. enc.returns[1].name, "string? text", "first return")
  eq(enc.returns[2].type .. " " .. enc.returns[2].name, "string? err", "second return")
  eq(enc.returns[2].desc, "the text, or nil and a message", "'#' description")
  eq(enc.signature, "json.encode(value, opts?) -> string?, string?", "signature")
  local p = docs.parse([[
---@meta t
local t = {}
--- Types.
---@param a fun(x: integer): string the callback
---@param b string | nil maybe
---@param c table<string, integer>
---@param d "get"|"post" the method
---@return fun(): integer, string iterator
function t.f(a, b, c, d) end
]]).functions[1]
  eq(p.params[1].type, "fun(x: integer): string", "fun type with a return")
  eq(p.params[1].desc, "the callback", "desc after fun type")
  eq(p.params[2].type, "string | nil", "union with blanks")
  eq(p.params[3].type, "table<string, integer>", "generic type")
  eq(p.params[4].type, '"get"|"post"', "literal types")
  eq(p.returns[1].type, "fun(): integer", "fun return type")
  eq(p.returns[2].type, "string", "second return after a fun type")
  eq(p.returns[2].name, "iterator", "its name")
end

function T.test_parse_fields_and_aliases()
  local m = docs.parse(JSON)
  eq(m.fields[1].name, "null", "field from an assignment")
  eq(m.fields[1].type, "lightuserdata", "its ---@type")
  eq(m.fields[1].desc, "A value that encodes as `null`.", "its text")
  local a = m.aliases["json.Mode"]
  assert(a, "alias json.Mode")
  eq(#a.values, 2, "alias values")
  eq(a.values[1].type .. " " .. a.values[1].desc, '"strict" reject comments', "first value")
end

function T.test_parse_module_names_and_locals()
  local m = docs.parse([[
---@meta lookout.store

--- Keep small values between runs.
local M = {}

---@class store.Bucket
local Bucket = {}

--- Reads a value.
---@param key string
---@return any
function M.get(key) end

--- Writes a value.
---@param key string
---@param value any
function Bucket:put(key, value) end

return M
]])
  eq(m.name, "lookout.store", "dotted module name")
  eq(m.summary, "Keep small values between runs.", "summary from a detached block")
  eq(names_of(m.functions), "lookout.store.get store.Bucket:put", "locals mapped")
  eq(m.functions[1].signature, "lookout.store.get(key) -> any", "signature")
end

function T.test_parse_malformed()
  raises(function()
    docs.parse("---@meta m\nlocal m = {}\n--- F.\n---@param y integer\nfunction m.f(x) end\n")
  end, 'docs: stub "m", line 4: ---@param "y" is not a parameter of m.f(x)', "unknown param")
  raises(function()
    docs.parse("---@meta m\nlocal m = {}\n---@parm x integer\nfunction m.f(x) end\n")
  end, 'stub "m", line 3: unknown tag ---@parm', "typo in a tag")
  raises(function()
    docs.parse("---@meta m\nlocal m = {}\n---@param x\nfunction m.f(x) end\n")
  end, 'stub "m", line 3: ---@param needs a name and a type', "param without a type")
  raises(function()
    docs.parse("---@meta m\nlocal m = {}\n---@param x integer\n\nfunction m.f(x) end\n")
  end, 'stub "m", line 3: ---@param is not followed by a function', "detached param")
  raises(function()
    docs.parse("---@meta m\nlocal m = {}\n---@return\nfunction m.f() end\n")
  end, 'stub "m", line 3: ---@return needs a type', "empty return")
  raises(function()
    docs.parse("---@meta m\nlocal m = {}\n---@param x integer\n---@param x string\n"
               .. "function m.f(x) end\n")
  end, 'stub "m", line 4: ---@param "x" is given twice', "param twice")
  raises(function()
    docs.parse("---@meta m\nlocal m = {}\nfunction m.f() end\nfunction m.f() end\n")
  end, 'stub "m", line 4: function m.f is documented twice', "function twice")
  raises(function() docs.parse("local m = {}\nreturn m\n", "m.lua") end,
         'docs: stub "m.lua", line 1: no ---@meta NAME line', "no meta, named by the source")
  raises(function() docs.parse("---@meta\n", "x.lua") end,
         'stub "x.lua", line 1: ---@meta needs the module name', "meta without a name")
  raises(function() docs.parse("---@meta a\n\n---@meta b\n") end,
         'stub "a", line 3: a second ---@meta', "two metas")
  raises(function() docs.parse("---@meta m\n---@class C\n---@field x\nlocal C = {}\n") end,
         'stub "m", line 3: ---@field needs a name and a type', "field without a type")
  raises(function() docs.parse("---@meta m\n---@param x integer\nfunction m.f(x) end\n") end,
         'stub "m", line 3: a function needs its own doc block', "function in the meta block")
  raises(function() docs.parse("--- Text.\n\n---@meta m\n") end,
         'stub "?", line 1: doc comment before ---@meta NAME', "doc before meta")
end

---------------------------------------------------------------------------------------------
-- registry
---------------------------------------------------------------------------------------------

function T.test_registry_entry()
  local r = registry()
  eq(r:entry("timer.after").kind, "function", "function")
  eq(r:entry("timer").kind, "module", "module")
  eq(r:entry("timer.Handle").kind, "class", "class")
  eq(r:entry("timer.Handle:stop").name, "timer.Handle:stop", "method")
  eq(r:entry("timer.Handle.stop").name, "timer.Handle:stop", "'.' for ':' is accepted")
  eq(r:entry("lookout.timer.after").name, "timer.after", "lookout. prefix")
  eq(r:entry("timer.after()").name, "timer.after", "trailing ()")
  eq(r:entry("json.Mode").kind, "alias", "alias")
  eq(r:entry("timerlib").name, "timer", "the module's class names the module")
  eq(r:entry("timer.nope"), nil, "unknown")
  eq(r:entry(42), nil, "not a string")
end

function T.test_registry_names()
  eq(table.concat(registry():names(), " "),
     "json.decode json.encode timer.Handle:stop timer.after timer.every", "sorted function names")
end

function T.test_registry_add_twice()
  local r = registry()
  raises(function() r:add(TIMER) end, 'docs: stub "timer", line 1: timer is already documented',
         "same module twice")
  raises(function()
    docs.new():add("---@meta m\nlocal m = {}\n---@param x y\nfunction m.f(z) end", "m.lua")
  end, 'docs: stub "m", line 3: ---@param "x" is not a parameter of m.f(z)',
     "add reports malformed stubs")
end

---------------------------------------------------------------------------------------------
-- help pages
---------------------------------------------------------------------------------------------

function T.test_help_function()
  eq(registry():help("timer.after"), [[
timer.after(delay, fn, ...) -> timer.Handle

Runs `fn` once after `delay`.

Parameters:
  delay  number|string  seconds, or a duration such as "90s", "5m", "1h"
  fn     fun(...)       called as a new task
  ...    any            passed to `fn`

Returns:
  timer.Handle  handle

Context: anywhere.]], "help timer.after")
end

function T.test_help_function_full()
  eq(registry():help("timer.every"), [[
timer.every(interval, opts?, fn) -> timer.Handle

Runs `fn` every `interval`. The first run comes after one interval; a run that
is still going when the next tick comes makes the timer skip that tick.

A repeating timer stops after 5 failed runs in a row.

Parameters:
  interval  number|string  seconds or a duration
  opts?     {continue_on_error?: boolean}
                           options
  fn        fun(...)       called as a new task each time

Returns:
  timer.Handle  handle

Context: anywhere.

Notes:
  `opts` may come before `fn`. Use `{continue_on_error = true}` to keep a
  failing timer going.]], "help timer.every")
  eq(registry():help("json.encode"), [[
json.encode(value, opts?) -> string?, string?

Encodes a value as JSON text, e.g. a table.

Parameters:
  value  any
  opts?  {indent?: string, sort_keys?: boolean}

Returns:
  string?  text
  string?  err   the text, or nil and a message]], "help json.encode")
end

function T.test_help_module()
  eq(registry():help("timer"), [[
timer — Run a function later, or every interval.

Timers are kept alive by the host until they fire, are stopped, or the script
ends: you do not need to keep the handle in a variable.

Functions:
  timer.after  Runs `fn` once after `delay`.
  timer.every  Runs `fn` every `interval`.

Fields:
  timer.resolution  number  smallest interval in seconds

Classes:
  timer.Handle  A running timer.
    :stop       Stops the timer; a running callback finishes.

Use help "timer.after" or help(timer.after) for the details of a function.]], "help timer")
end

function T.test_help_class()
  eq(registry():help("timer.Handle"), [[
timer.Handle — A running timer.

Fields:
  id  integer  unique within the script

Methods:
  timer.Handle:stop  Stops the timer; a running callback finishes.]], "help timer.Handle")
  eq(registry():help("timer.Handle:stop"), [[
timer.Handle:stop() -> boolean

Stops the timer; a running callback finishes.

Returns:
  boolean  stopped  false if it had already stopped]], "help of a method")
end

function T.test_help_alias()
  eq(registry():help("json.Mode"), [[
json.Mode

Values:
  "strict"   reject comments
  "lenient"  accept comments]], "help of an alias")
end

function T.test_help_values()
  local r = registry()
  local timer = { after = function() end, every = function() end }
  local Handle = { stop = function() end }
  local handle = setmetatable({}, { __index = Handle, __name = "timer.Handle" })
  local json = { encode = function() end }
  local opts = { roots = { timer = timer, json = json, string = string, print = print },
                 classes = { ["timer.Handle"] = Handle } }
  eq(r:help(timer.after, opts), r:help("timer.after"), "a module function")
  eq(r:help(timer, opts), r:help("timer"), "a module table")
  eq(r:help(Handle.stop, opts), r:help("timer.Handle:stop"), "a method, through opts.classes")
  eq(r:help(Handle, opts), r:help("timer.Handle"), "a methods table")
  eq(r:help(json.encode, opts), r:help("json.encode"), "another module")
  opts.getmetatable = getmetatable
  eq(r:help(handle, opts), r:help("timer.Handle"), "an instance, through its metatable")
  eq(r:help(string.format, opts), "string.format: Lua standard library\n"
     .. "https://www.lua.org/manual/5.4/manual.html#pdf-string.format", "a standard function")
  eq(r:help(print, opts), "print: Lua standard library\n"
     .. "https://www.lua.org/manual/5.4/manual.html#pdf-print", "a base function")
  local f = function() end
  eq(r:help(f, opts), "no help for " .. tostring(f) .. "; try help() for a list of modules",
     "an unknown function")
  eq(r:help(42, opts), "no help for 42; try help() for a list of modules", "a number")
  local trap = setmetatable({}, { __index = function() error("called") end,
                                  __tostring = function() error("called") end,
                                  __eq = function() error("called") end })
  local shown = r:help(trap, { roots = { trap = {} } })
  assert(shown:find("^no help for table: "), "metamethods are not called, got " .. shown)
end

function T.test_help_stdlib_names()
  local r = registry()
  eq(r:help("string.format"), "string.format: Lua standard library\n"
     .. "https://www.lua.org/manual/5.4/manual.html#pdf-string.format", "string.format")
  eq(r:help("string"), "string: Lua standard library (manual §6.4)\n"
     .. "https://www.lua.org/manual/5.4/manual.html#6.4", "a standard library")
  eq(docs.manual_url("table.concat"),
     "https://www.lua.org/manual/5.4/manual.html#pdf-table.concat", "manual_url")
  eq(docs.manual_url("nightscout"), nil, "not a standard name")
end

function T.test_help_unknown()
  local r = registry()
  eq(r:help("timer.aftr"), 'no help for "timer.aftr"; try help "timer.after"', "typo")
  eq(r:help("tmer"), 'no help for "tmer"; try help "timer"', "typo in a module")
  eq(r:help("Handle:stop"), 'no help for "Handle:stop"; try help "timer.Handle:stop"',
     "tail of a name")
  eq(r:help("timer.e"), 'no help for "timer.e"; try help "timer.every", help "timer"',
     "prefix first, then by edit distance")
  eq(r:help("json.dec"), 'no help for "json.dec"; try help "json.decode"', "prefix")
  eq(r:help("prnt"), 'no help for "prnt"; try help "print"', "standard names are suggested")
  eq(r:help("zzzzzz"), 'no help for "zzzzzz"; try help() for a list of modules', "nothing close")
  eq(r:help("js"), 'no help for "js"; try help "json", help "json.Mode", help "json.decode", '
     .. 'help "json.encode"', "several")
end

function T.test_help_overview()
  eq(registry():help(), [[
Lookout help

Modules:
  json   Encode and decode JSON.
  timer  Run a function later, or every interval.

help(x) shows the documentation of a module, function, class or value, e.g.
help(json) or help(json.encode); names work too: help "json.encode".
For Lua's standard library, help "string.format" links to the Lua 5.4 manual.]], "overview")
  eq(docs.new():help(), [[
Lookout help

help(x) shows the documentation of a module, function, class or value.
For Lua's standard library, help "string.format" links to the Lua 5.4 manual.]],
     "overview of an empty registry")
end

function T.test_help_overview_names_only_reachable_values()
  -- in the REPL `json` is a global, `timer` here is not: help(timer) would fail there
  local page = registry():help(nil, { reachable = function(name) return name == "json" end })
  assert(page:find("help(json) or help(json.encode)", 1, true), page)
  page = registry():help(nil, { reachable = function() return false end }):gsub("%s+", " ")
  assert(not page:find("help(json", 1, true) and not page:find("help(timer", 1, true),
         "no help(x) example for an unreachable module:\n" .. page)
  assert(page:find('help "json" or help "json.encode"', 1, true), page)
end

function T.test_help_of_host_objects_and_their_methods()
  local r = registry()
  local methods = { stop = function() end }
  -- a host object: its metatable names the type ("lookout.timer.handle"), __index its methods
  local handle = setmetatable({}, { __name = "lookout.timer.handle", __index = methods })
  eq(r:class_for_type("lookout.timer.handle"), "timer.Handle", "type name to documented class")
  eq(r:class_for_type("lookout.nothing"), nil, "an undocumented type")
  local opts = { getmetatable = getmetatable, classes = { ["timer.Handle"] = methods } }
  eq(r:help(handle, opts), r:help("timer.Handle"), "an object shows its class and methods")
  eq(r:help(handle, { getmetatable = getmetatable }), r:help("timer.Handle"), "also without opts.classes")
  eq(r:help(handle.stop, opts), r:help("timer.Handle:stop"), "a method taken from an object")
end

function T.test_code_after_context_keeps_its_lines()
  local r = docs.new()
  r:add([[
---@meta ex
--- An example module.
local ex = {}

--- Does a thing.
--- Context: anywhere.
--- ```lua
--- local x = ex.f(1)
--- print(x)
--- ```
---@param n integer
function ex.f(n) end
return ex
]])
  local page = r:help("ex.f")
  assert(page:find("\n```lua\nlocal x = ex.f%(1%)\nprint%(x%)\n```"), "code keeps its lines:\n" .. page)
  assert(page:find("Context: anywhere.", 1, true), page)
  assert(not page:find("Context: anywhere. ```", 1, true), page)
end

function T.test_help_wraps_at_width()
  local r = docs.new()
  r:add([[
---@meta long
--- A module.
local long = {}

--- Does one thing.
--- This description is deliberately long so that it has to be wrapped over several lines when the help page is shown, and it contains a_very_long_identifier_that_cannot_be_broken_anywhere_at_all_because_it_has_no_blanks.
---
--- - a list item that is long enough to wrap around the end of the line at eighty columns
--- - a second item
---
---     verbatim   code   stays
---@param x integer a parameter whose description is long enough to need wrapping under its own column
function long.f(x) end
return long
]])
  local page = r:help("long.f")
  eq(page, [[
long.f(x)

Does one thing. This description is deliberately long so that it has to be
wrapped over several lines when the help page is shown, and it contains
a_very_long_identifier_that_cannot_be_broken_anywhere_at_all_because_it_has_no_blanks.

- a list item that is long enough to wrap around the end of the line at eighty
  columns
- a second item

    verbatim   code   stays

Parameters:
  x  integer  a parameter whose description is long enough to need wrapping
              under its own column]], "wrapped page")
  for line in (page .. "\n"):gmatch("(.-)\n") do
    assert(utf8.len(line) <= 80 or not line:find(" ", 1, true),
           "a line over 80 columns that could be wrapped: " .. line)
  end
  local narrow = r:help("long.f", { width = 40 })
  for line in (narrow .. "\n"):gmatch("(.-)\n") do
    assert(utf8.len(line) <= 40 or not line:find("%S %S"),
           "a line over 40 columns that could be wrapped: " .. line)
  end
end

return T
