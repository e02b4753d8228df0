-- The Lua side of the REPL (loaded by LuaRuntime+REPL.swift): runs a line and formats its
-- results, completes names, answers help().
local rawmetatable, stubs, modules, typemethods = ...
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
-- Glucose in entries as people read it: `sgv = 132 --[[ 132 mg/dL (7.3 mmol/L) → ]]`, in the
-- configured unit, by the nightscout module's one formatter (when the module is there); a
-- reading's `age` and `delta` with their units (`--[[ 42 s ago ]]`, `--[[ -3.2 mg/dL per 5 min ]]`);
-- a Signal K leaf's `value` (and a bare number from `boat:get`) in knots, degrees, °C… from its
-- meta: the `displayUnits` the server resolved, else its SI `units`.
-- A Signal K value in the unit people read, from its path's meta (SI units on the wire).
local signalk_units = {
  ["m/s"] = function(v) return string.format("%.1f kn", v * 3600 / 1852) end,
  rad = function(v) return string.format("%.1f°", math.deg(v)) end,
  ["rad/s"] = function(v) return string.format("%.1f°/min", math.deg(v) * 60) end,
  K = function(v) return string.format("%.1f °C", v - 273.15) end,
  Pa = function(v) return string.format("%.1f hPa", v / 100) end,
  m = function(v) return string.format("%.1f m", v) end,
  ratio = function(v) return string.format("%.0f %%", v * 100) end,
}
-- A value by the display units the server resolved for its path (`meta.displayUnits`, as
-- signalk-server serves them: a formula from SI, a symbol and a display format), for the
-- formulas of the default preferences (`value`, `value * k`, `value / k`, `value + k`, `value - k`).
local function by_display_units(v, du)
  if type(du) ~= "table" then return nil end
  local formula, symbol = rawget(du, "formula"), rawget(du, "symbol")
  if type(formula) ~= "string" or type(symbol) ~= "string" then return nil end
  local shown
  if formula == "value" then
    shown = v
  else
    local op, k = formula:match("^value ([%*/%+%-]) (%S+)$")
    k = tonumber(k)
    if not k then return nil end
    if op == "*" then shown = v * k elseif op == "/" then shown = v / k elseif op == "+" then shown = v + k else shown = v - k end
  end
  local format = rawget(du, "displayFormat")
  local decimals = format == "0" and 0 or type(format) == "string" and format:match("^0%.(0+)$") and #format - 2 or 1
  local text = string.format("%." .. decimals .. "f", shown)
  if symbol == "" then return text, symbol end
  return (symbol == "°" and text .. symbol or text .. " " .. symbol), symbol
end
-- A Signal K value's note from its path's meta: in its display units, else by its SI units.
local function signalk_note(v, meta)
  if type(meta) ~= "table" then return nil end
  local units = rawget(meta, "units")
  local shown, symbol = by_display_units(v, rawget(meta, "displayUnits"))
  if not shown then
    local show = type(units) == "string" and signalk_units[units]
    shown = show and show(v)
  end
  if not shown then return nil end
  if type(units) ~= "string" or units == symbol then return shown end
  return shown .. " (" .. units .. ")"
end
repl.options.annotate = function(t, k, v)
  if k == "value" and math.type(v) ~= nil then
    local note = signalk_note(v, rawget(t, "meta"))
    if note then return note end
  end
  if math.type(v) ~= nil and rawget(t, "sgv") ~= nil then
    if k == "age" then
      return v < 120 and string.format("%d s ago", math.floor(v + 0.5)) or string.format("%d min ago", math.floor(v / 60 + 0.5))
    elseif k == "delta" then
      return string.format("%+.1f mg/dL per 5 min", v)
    end
  end
  if k ~= "sgv" or math.type(v) == nil then return nil end
  local ns = package.loaded.nightscout
  local format = type(ns) == "table" and rawget(ns, "format_bg")
  if type(format) ~= "function" then return nil end
  local dir = rawget(t, "direction")
  return format(v, { direction = type(dir) == "string" and dir or nil })
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
-- The methods tables of the host's object types, by their documented class names
-- (`nightscout.Client` for "lookout.nightscout.client"), so that help(home.entries) finds them.
local function classes()
  local out = {}
  for tname, methods in pairs(typemethods()) do
    local class = help_registry():class_for_type(tname)
    if class and type(methods) == "table" then out[class] = methods end
  end
  return out
end
function help(...)
  local x = ...
  if x == nil and select("#", ...) > 0 then
    -- help(nightscout) where `nightscout` is no global: the value is nil, not the module.
    print('help(nil): the value given is nil, not a module: a module that is not a global is named in quotes, '
      .. 'as in help "nightscout" (or first: local nightscout = require "nightscout"); help() lists every module')
    return
  end
  print(help_registry():help(x, { roots = roots(), getmetatable = rawmetatable, classes = classes(),
                                  reachable = function(name) return rawget(_G, name) ~= nil end }))
end

-- A bare number from `boat:get(path)` is shown in its display units too: the boat's `get` is
-- watched (once its type exists, that is after `require "signalk"`), and a number it returns
-- brings the path's meta (one `boat:meta(path)` per boat and path, kept for the session).
local watched = setmetatable({}, { __mode = "k" })
local metas = setmetatable({}, { __mode = "k" })  -- boat → path → meta or false
local last_get  -- { value, meta } of the latest number `get` returned on this line
local function watch_boat_get()
  local methods = typemethods()["lookout.signalk.boat"]
  if type(methods) ~= "table" or watched[methods] then return end
  watched[methods] = true
  local get, meta = rawget(methods, "get"), rawget(methods, "meta")
  if type(get) ~= "function" or type(meta) ~= "function" then return end
  rawset(methods, "get", function(self, path, ...)
    local r = pack(get(self, path, ...))
    local v = r[1]
    if math.type(v) ~= nil and type(path) == "string" and path ~= "" and not path:find("^vessels%.") then
      local known = metas[self] or {}
      metas[self] = known
      if known[path] == nil then
        local ok, m = pcall(meta, self, path)
        known[path] = ok and type(m) == "table" and m or false
      end
      last_get = known[path] and { value = v, meta = known[path] } or nil
    end
    return unpack(r, 1, r.n)
  end)
end

local function driver(...)
  watch_boat_get()
  last_get = nil
  local r = pack((...)())  -- called unnamed, so tracebacks say "in main chunk"
  _, _1, _2, _3 = r[1], r[1], r[2], r[3]
  local text = repl.results(r.n, unpack(r, 1, r.n))
  local got = last_get
  last_get = nil
  if r.n == 1 and got and rawequal(r[1], got.value) then
    local ok, note = pcall(signalk_note, r[1], got.meta)
    if ok and note then text = text .. " --[[ " .. note .. " ]]" end
  end
  return text
end
local function complete(line, cursor)
  return repl.complete(line, cursor, _G, repl.options)
end
return driver, complete
