-- `--trusted` scripts get the Lua of the manual (issue 26): where the suite found Lookout's
-- trusted Lua differing from stock 5.4.4. Every test here also passes under stock `lua5.4`
-- (`lua5.4 test_stock_trusted.lua` runs them all), so an assertion here is stock behaviour.
local T = {}

local function check(what, got, expected)
  if got ~= expected then
    error(("%s: expected %q, got %q"):format(what, tostring(expected), tostring(got)), 2)
  end
end

-- ---- print ------------------------------------------------------------------------------------

-- print is a C function without upvalues (db.lua line 38 and 694, closure.lua line 266).
function T.test_print_is_a_c_function()
  local info = debug.getinfo(print, "Su")
  check("print what", info.what, "C")
  check("print short_src", info.short_src, "[C]")
  check("print nups", info.nups, 0)
  check("print isvararg", info.isvararg, true)
  local function f() return info end
  check("upvaluejoin(print)", pcall(debug.upvaluejoin, print, 1, f, 1), false)
  check("upvaluejoin(f, print)", pcall(debug.upvaluejoin, f, 1, print, 1), false)
end

-- ---- debug.sethook ------------------------------------------------------------------------------

-- The hook sees the script's stack as stock's: sethook itself adds no frame (locals.lua line 744,
-- db.lua line 617).
function T.test_sethook_adds_no_frame()
  local trace = {}
  local function hook(event)
    trace[#trace + 1] = event .. " " .. tostring(debug.getinfo(2, "n").name)
  end
  debug.sethook(hook, "r")
  local _ = math.abs(-1)
  debug.sethook()
  check("first event", trace[1], "return sethook")
  check("second event", trace[2], "return abs")
  check("events", #trace, 2)
end

function T.test_sethook_events_are_stocks()
  local events = {}
  debug.sethook(function(event) events[#events + 1] = event end, "cr")
  local _ = math.abs(1)
  debug.sethook()
  check("events", table.concat(events, " "), "return call return call")
end

function T.test_gethook_reports_the_hook()
  local function hook() end
  debug.sethook(hook, "lc", 7)
  local got, mask, count = debug.gethook()
  debug.sethook()
  check("gethook function", got, hook)
  check("gethook mask", mask, "cl")
  check("gethook count", count, 7)
  check("no hook", debug.gethook(), nil)
  local co = coroutine.create(function() end)
  debug.sethook(co, hook, "r")
  check("a coroutine's hook", debug.gethook(co), hook)
  check("this thread keeps none", debug.gethook(), nil)
end

-- ---- binary chunks --------------------------------------------------------------------------------

-- string.dump and binary chunks (calls.lua line 316, errors.lua line 256, files.lua line 553,
-- db.lua line 982).
function T.test_string_dump_loads_back()
  local function f(a) return a * 2, "\0x\255" end
  local chunk = string.dump(f)
  check("signature", chunk:sub(1, 4), "\27Lua")
  local g = assert(load(chunk, "dumped", "b"))
  local x, y = g(21)
  check("result", x, 42)
  check("bytes", y, "\0x\255")
  local stripped = assert(load(string.dump(f, true)))
  check("stripped", (stripped(2)), 4)
  local fn, err = load(chunk, "dumped", "t")
  check("text mode refuses it", fn, nil)
  assert(err:find("attempt to load a binary chunk (mode is 't')", 1, true), err)
end

function T.test_loadfile_and_dofile_load_binary_files()
  local name = os.tmpname()
  local file = assert(io.open(name, "wb"))
  file:write(string.dump(function() return 10, "hi" end))
  file:close()
  local a, b = assert(loadfile(name))()
  local c = dofile(name)
  os.remove(name)
  check("loadfile", a, 10)
  check("loadfile 2", b, "hi")
  check("dofile", c, 10)
end

-- ---- require -----------------------------------------------------------------------------------

-- require follows package.path and package.cpath (attrib.lua line 46 and 51-70).
function T.test_require_reads_package_path()
  local path = package.path
  package.path = {}
  local ok, err = pcall(require, "no-such-module")
  package.path = path
  check("require", ok, false)
  assert(err:find("'package.path' must be a string", 1, true), err)
end

function T.test_require_lists_path_and_cpath()
  local path, cpath = package.path, package.cpath
  package.path, package.cpath = "?.lua;?/?", "?.so;?/init"
  local ok, msg = pcall(require, "XXX")
  package.path, package.cpath = path, cpath
  check("require", ok, false)
  check("message", msg, "module 'XXX' not found:\n\tno field package.preload['XXX']\n\tno file 'XXX.lua'"
    .. "\n\tno file 'XXX/XXX'\n\tno file 'XXX.so'\n\tno file 'XXX/init'")
  check("searchpath", type(package.searchpath), "function")
  check("loadlib", type(package.loadlib), "function")
end

-- Stock lua runs the tests when this file is its script.
if not task then
  for name, test in pairs(T) do test(); print("ok", name) end
end
return T
