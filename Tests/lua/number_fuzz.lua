-- Feeds hostile numbers and durations to every function a Lookout script can call, and reports
-- every call that did not either work or raise a clear argument error. Run by
-- `NumberBoundaryTests` in-process and through `lookout run` (`NumberCrashTests`), where a Swift
-- trap fails the test instead of the test runner.
--
-- The list of functions is generated, not written down:
--   * module functions: every function found by walking the loaded module tables (and their
--     sub-tables, e.g. `signalk.units`), so a new binding cannot be missed;
--   * methods: every method the stubs document for a class, called on a receiver made against the
--     local simulators (RECEIVERS below); a class without a receiver is reported as "unreached".
-- Parameters and option fields come from the stubs (`---@param`, `---@field`), so each number,
-- duration, count and size slot, and each option field, gets every hostile value.
--
-- Input: the global FUZZ = { stubs = {name = text}, modules = {names}, nightscout_url = …,
-- signalk_url = …, http_url = … }; profiles named "fuzz" for garmin, feedback (northlight) and
-- notify are expected in the config. Output: "problem …" lines, "unreached …" lines, and a final
-- "summary functions=N calls=N".
local FUZZ = FUZZ
local docs = require "lookout._docs"
local alert, nightscout, signalk = require "alert", require "nightscout", require "signalk"
local garmin, feedback, schedule, script = require "garmin", require "feedback", require "schedule", require "script"
local registry = docs.new()
local module_names = {}
for name, text in pairs(FUZZ.stubs) do
  registry:add(text, name .. ".lua")
  module_names[#module_names + 1] = name
end
table.sort(module_names)

local HOSTILE = {
  0, -0.0, 1e-300, -1e-300, 1e10, -1e10, 2^53, 2^63, -2^63, math.maxinteger, math.mininteger,
  1e300, -1e300, 0/0, 1/0, -1/0,
  "2600000h", "100000000d", "99999999999999999999s", "1e400", "nan", "inf",
}

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if math.type(v) == "integer" then return tostring(v) end
  return string.format("%.17g", v)
end

-- An error is clear when it says which argument is wrong and why.
local CLEAR = { "bad argument", "must be between", "expected", "invalid", "unknown option", "cannot",
                "not allowed", "has no integer representation", "out of range", "too short", "too long",
                "no alert" }
local function clear(message)
  if type(message) == "table" then message = tostring(message) end
  if type(message) ~= "string" then return false end
  if message:find("internal error", 1, true) then return false end
  for _, pattern in ipairs(CLEAR) do
    if message:find(pattern, 1, true) then return true end
  end
  return false
end

-- Valid values for parameters and option fields named so, where any string would not do.
local NAMED = {
  url = function(fname)
    if fname:find("^signalk") then return FUZZ.signalk_url end
    if fname:find("^nightscout") then return FUZZ.nightscout_url end
    return FUZZ.http_url
  end,
  collection = function() return "entries" end,
  kind = function(fname) return fname:find("Profile") and "basal" or "bolus" end,
  path = function(fname) return fname:find("signalk") and "navigation.speedOverGround" or "/" end,
  pattern = function() return "navigation.*" end,
  expression = function() return "0 3 * * *" end,
  time = function() return "23:59" end,
  date = function() return "2024-01-01" end,
  start = function() return "2024-01-01" end,
  finish = function() return "2024-01-02" end,
  series = function(fname)
    if fname:find("^chart") then return { { time = 1700000000000, value = 100 }, { time = 1700000300000, value = 110 } } end
    return function() return 100 end
  end,
  when = function() return alert.above(1) end,
  cond = function() return alert.above(1) end,
  conds = function() return { alert.above(1) } end,
  key = function() return "fuzz" end,
  id = function() UNIQUE = (UNIQUE or 0) + 1 return "fuzz-id-" .. UNIQUE end,
  name = function() return "fuzz" end,
  profile = function() return "fuzz" end,
}

local function classes_in(t)
  local list = {}
  for name in t:gmatch("[%a_][%w_.]*") do
    local e = registry:entry(name)
    if e and e.kind == "class" then list[#list + 1] = e end
  end
  return list
end

-- Field names of a parameter type: inline `{a?: T, b: T}` and documented classes.
local function fields_of(t)
  local fields = {}
  local inline = t:match("^%s*{(.*)}%s*$") or t:match("|%s*{(.*)}") or t:match("^%s*{(.*)}")
  if inline then
    local depth, start = 0, 1
    local parts = {}
    for i = 1, #inline do
      local c = inline:sub(i, i)
      if c == "{" or c == "(" or c == "<" then depth = depth + 1
      elseif c == "}" or c == ")" or c == ">" then depth = depth - 1
      elseif c == "," and depth == 0 then parts[#parts + 1] = inline:sub(start, i - 1); start = i + 1 end
    end
    parts[#parts + 1] = inline:sub(start)
    for _, part in ipairs(parts) do
      local name, optional, ftype = part:match("^%s*([%a_][%w_]*)(%??)%s*:%s*(.-)%s*$")
      if name then fields[#fields + 1] = { name = name, type = ftype, optional = optional == "?" } end
    end
  end
  for _, class in ipairs(classes_in(t)) do
    for _, f in ipairs(class.fields) do
      if not f.name:find("^%[") then fields[#fields + 1] = f end
    end
  end
  return fields
end

local base_for
local function base_table(t, fname)
  local tbl = {}
  for _, f in ipairs(fields_of(t)) do
    if not f.optional then tbl[f.name] = base_for(f.type, f.name, fname) end
  end
  return tbl
end

function base_for(t, name, fname)
  if name and NAMED[name] then return NAMED[name](fname) end
  t = t or "any"
  if t:find("fun%(") or t:find("function") then return function() end end
  if #fields_of(t) > 0 then return base_table(t, fname) end
  if t:find("string") then return "fuzz" end
  if t:find("integer") or t:find("number") then return 1 end
  if t:find("table") or t:find("%[%]") then return {} end
  if t:find("boolean") then return false end
  return nil
end

-- Receivers for methods, made fresh for each method (a method may close its receiver).
local made = {}
local function keep(x) if x ~= nil then made[#made + 1] = x end return x end
local alerts = 0
local RECEIVERS = {
  ["timer.Handle"] = function() return keep(timer.after(3600, function() end)) end,
  ["task.Task"] = function() return keep(task.spawn(function() sleep(3600) end)) end,
  ["nightscout.Client"] = function() return nightscout.connect { url = FUZZ.nightscout_url, timeout = 5 } end,
  ["nightscout.Profile"] = function()
    local c = nightscout.connect { url = FUZZ.nightscout_url, timeout = 5 }
    return c and c:profile()
  end,
  ["signalk.Boat"] = function() return keep(signalk.connect { url = FUZZ.signalk_url, subscribe = "none", timeout = 10 }) end,
  ["signalk.Handler"] = function()
    local boat = keep(signalk.connect { url = FUZZ.signalk_url, subscribe = "none", timeout = 10 })
    return boat and keep(boat:on("navigation.*", function() end))
  end,
  ["garmin.Client"] = function() return garmin.client "fuzz" end,
  ["feedback.Client"] = function() return feedback.client "fuzz" end,
  ["schedule.Job"] = function() return keep(schedule.every(3600, function() end)) end,
  ["alert.Alert"] = function()
    alerts = alerts + 1
    return alert.define { id = "fuzz-" .. alerts, series = function() return 100 end, when = alert.above(1) }
  end,
}
local function release()
  for _, x in ipairs(made) do
    pcall(function()
      local stop = x.close or x.stop or x.cancel
      if stop then stop(x) end
    end)
  end
  made = {}
end

-- Functions that end the script or the run: called by no fuzzer (documented here).
local SKIP = { ["script.exit"] = "ends the script" }

local calls, functions = 0, 0
local function problem(fname, where, v, what)
  print(("problem %s %s=%s: %s"):format(fname, where, show(v), tostring(what)))
end

local function try(fname, f, receiver, args, n, where, v)
  calls = calls + 1
  local ok, err
  if receiver ~= nil then
    ok, err = pcall(f, receiver, table.unpack(args, 1, n))
  else
    ok, err = pcall(f, table.unpack(args, 1, n))
  end
  if not ok and not clear(err) then problem(fname, where, v, err) end
end

local function fuzz(fname, entry, f, make_receiver)
  functions = functions + 1
  print("fuzzing " .. fname)
  local params = {}
  for i, a in ipairs(entry and entry.arg_names or {}) do
    local doc = entry.params and nil
    for _, p in ipairs(entry.params or {}) do if p.name == a then doc = p end end
    params[i] = { name = a, type = doc and doc.type or "any" }
  end
  local n = math.max(#params, 1)
  local function base()
    local args = {}
    for i, p in ipairs(params) do args[i] = base_for(p.type, p.name ~= "..." and p.name or nil, fname) end
    return args
  end
  for i = 1, n do
    local p = params[i] or { name = "extra", type = "any" }
    for _, v in ipairs(HOSTILE) do
      local receiver = make_receiver and make_receiver()
      if make_receiver and receiver == nil then return false end
      local args = base()
      args[i] = v
      try(fname, f, receiver, args, n, p.name, v)
    end
    for _, field in ipairs(fields_of(p.type)) do
      for _, v in ipairs(HOSTILE) do
        local receiver = make_receiver and make_receiver()
        if make_receiver and receiver == nil then return false end
        local args = base()
        if type(args[i]) ~= "table" then args[i] = base_table(p.type, fname) end
        args[i][field.name] = v
        try(fname, f, receiver, args, n, p.name .. "." .. field.name, v)
      end
    end
    release()
  end
  release()
  return true
end

-- Module functions: walk the loaded tables.
local seen = {}
local function walk(prefix, tbl, depth)
  if depth > 2 or seen[tbl] then return end
  seen[tbl] = true
  local keys = {}
  for k in pairs(tbl) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = rawget(tbl, k)
    local fname = prefix .. "." .. k
    if type(v) == "function" and not SKIP[fname] then
      fuzz(fname, registry:entry(fname), v)
    elseif type(v) == "table" and not k:find("^_") then
      walk(fname, v, depth + 1)
    end
  end
end
for _, name in ipairs(module_names) do
  local ok, module = pcall(require, name)
  if ok and type(module) == "table" then walk(name, module, 1) end
end

-- Methods: every documented method of every class, on a receiver.
local methods = {}
for _, name in ipairs(registry:names()) do
  local class, method = name:match("^(.*):([%a_][%w_]*)$")
  if class then methods[#methods + 1] = { class = class, method = method, name = name } end
end
for _, m in ipairs(methods) do
  local make = RECEIVERS[m.class]
  local receiver = make and make()
  if receiver == nil then
    print("unreached " .. m.name)
  else
    local f = receiver[m.method]
    release()
    if type(f) ~= "function" then
      print("problem " .. m.name .. ": documented but not a method of its receiver")
    else
      fuzz(m.name, registry:entry(m.name), f, make)
    end
  end
end

print(("summary functions=%d calls=%d"):format(functions, calls))
script.exit(0)
