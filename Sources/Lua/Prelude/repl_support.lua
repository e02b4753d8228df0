-- The Lua side of the REPL (loaded by LuaRuntime+REPL.swift): runs a line and formats its
-- results, completes names, answers help().
local rawmetatable, stubs, modules = ...
local repl = require "lookout._repl"
local json = require "json"
local pack, unpack, select = table.pack, table.unpack, select
repl.options.null = json.null
repl.options.getmetatable = rawmetatable
repl.options.modules = modules
repl.options.tostring = function(v)
  local ok, text = pcall(tostring, v)
  return ok and text or ("<" .. type(v) .. ": __tostring failed>")
end
-- The help registry is read from the stubs on the first help(), not at start-up: the REPL opens
-- at once, and parsing never counts against a tight --cpu-limit before the first line.
local registry
local function help_registry()
  if not registry then
    local docs = require "lookout._docs"
    registry = docs.new()
    local names = {}
    for name in pairs(stubs) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do registry:add(stubs[name], name .. ".lua") end
  end
  return registry
end

local function roots()
  local r = { string = string, table = table, math = math, utf8 = utf8, coroutine = coroutine, os = os }
  for _, name in ipairs(modules) do r[name] = package.loaded[name] end
  return r
end
function help(x)
  print(help_registry():help(x, { roots = roots(), getmetatable = rawmetatable }))
end

local function driver(...)
  local r = pack((...)())  -- called unnamed, so tracebacks say "in main chunk"
  _, _1, _2, _3 = r[1], r[1], r[2], r[3]
  return repl.results(r.n, unpack(r, 1, r.n))
end
local function complete(line, cursor)
  return repl.complete(line, cursor, _G, repl.options)
end
return driver, complete
