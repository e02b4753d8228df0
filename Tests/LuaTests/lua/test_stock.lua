-- Lookout's Lua behaves as stock Lua 5.4.4 where issue 26 found it did not. Every test here also
-- passes under stock `lua5.4` (run this file with STOCK = true: `lua5.4 -e STOCK=true test_stock.lua`),
-- so an assertion here is stock behaviour, not Lookout's idea of it.
local T = {}

local function check(what, got, expected)
  if got ~= expected then
    error(("%s: expected %q, got %q"):format(what, tostring(expected), tostring(got)), 2)
  end
end

local function message(f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error")
  return err
end

-- ---- coroutine.wrap -------------------------------------------------------------------------------

-- An error raised by a <close> handler while the coroutine dies replaces the original error
-- (locals.lua around line 980).
function T.test_wrap_keeps_the_close_error()
  local f = coroutine.wrap(function()
    local x <close> = setmetatable({}, { __close = function() error("from close", 0) end })
    error("original", 0)
  end)
  local ok, err = pcall(f)
  check("wrap close error", ok, false)
  check("wrap close error", err, "from close")
end

-- A string error through a wrap function gets the caller's position in front, as lcorolib does.
function T.test_wrap_error_has_the_callers_position()
  local f = coroutine.wrap(function() error("boom") end)
  local err = message(function() f() end)
  assert(err:match("^[^:]+:%d+: [^:]+:%d+: boom$"), err)
  local g = coroutine.wrap(function() error({ code = 1 }) end)
  local ok, value = pcall(g)
  check("table error unchanged", type(value), "table")
end

-- ---- Messages name the function the script called ---------------------------------------------------

function T.test_argument_errors_name_the_library_function()
  check("wrap", message(coroutine.wrap, 42), "bad argument #1 to 'coroutine.wrap' (function expected, got number)")
  check("resume", message(coroutine.resume, 42), "bad argument #1 to 'coroutine.resume' (thread expected, got number)")
  check("require", message(require), "bad argument #1 to 'require' (string expected, got no value)")
end

function T.test_require_message_is_stocks()
  -- both on one line: the position of the second is the one the first must have
  local err, here = message(function() require "nosuchmod" end), message(function() error("here") end)
  assert(err:find("module 'nosuchmod' not found:\n\t", 1, true), err)
  assert(not err:find("\n\t\n", 1, true), "an empty line in: " .. err)
  assert(not err:find("\n\n", 1, true), "an empty line in: " .. err)
  assert(not err:find("prelude", 1, true), err)
  -- the position is the caller's line
  local position = here:match("^(.-)here$")
  check("position", err:sub(1, #position), position)
end

-- ---- The main chunk (and every task) is the main coroutine --------------------------------------

function T.test_the_task_is_the_main_coroutine()
  local co, ismain = coroutine.running()
  check("type", type(co), "thread")
  check("ismain", ismain, true)
  check("isyieldable", coroutine.isyieldable(), false)
  local ok, err = pcall(coroutine.yield, 1, 2)
  check("pcall(coroutine.yield)", ok, false)
  check("message", err, "attempt to yield from outside a coroutine")
  local inner = coroutine.wrap(function()
    local c, m = coroutine.running()
    return c, m, coroutine.isyieldable(), coroutine.status(co)
  end)
  local c, m, y, status = inner()
  assert(c ~= co)
  check("inner ismain", m, false)
  check("inner isyieldable", y, true)
  check("main seen from inside", status, "normal")
  check("isyieldable(co)", coroutine.isyieldable(coroutine.create(print)), true)
end

-- ---- The string metatable ---------------------------------------------------------------------------

function T.test_string_metatable_is_visible()
  local mt = getmetatable("")
  check("type", type(mt), "table")
  check("__index", mt.__index, string)
  -- the idiom of bwcoercion.lua: a field added to the metatable applies to every string
  mt.__unm = function(s) return "-" .. s end
  local ok, result = pcall(function() return -"x" end)
  mt.__unm = nil
  check("__unm", result, "-x")
end

-- ---- load ---------------------------------------------------------------------------------------------

function T.test_load_mode_b_returns_nil_and_message()
  local f, err = load("return 1", "chunk", "b")
  check("f", f, nil)
  check("err", err, "attempt to load a text chunk (mode is 'b')")
  local pieces = { "return ", "1" }
  f, err = load(function() return table.remove(pieces, 1) end, "chunk", "b")
  check("reader f", f, nil)
  check("reader err", err, "attempt to load a text chunk (mode is 'b')")
  f, err = load("\27Lua", "bin", "t")
  check("binary in mode t", err, "attempt to load a binary chunk (mode is 't')")
  check("load(42)", load("return 42")(), 42)
  check("bad type", message(load, {}), "bad argument #1 to 'load' (function expected, got table)")
end

-- ---- table.concat and table.remove ---------------------------------------------------------------

function T.test_table_errors_are_5_4_4s()
  check("concat", message(table.concat, { 1, {} }), "invalid value (table) at index 2 in table for 'concat'")
  check("concat nil", message(table.concat, { 1, 2 }, "", 1, 3), "invalid value (nil) at index 3 in table for 'concat'")
  check("remove", message(table.remove, { 1, 2, 3 }, 7), "bad argument #1 to 'table.remove' (position out of bounds)")
  check("insert", message(table.insert, { 1, 2, 3 }, 7, 0), "bad argument #2 to 'table.insert' (position out of bounds)")
end

-- ---- collectgarbage -------------------------------------------------------------------------------

function T.test_collectgarbage_bad_option_message()
  check("bad option", message(collectgarbage, "bogus"), "bad argument #1 to 'collectgarbage' (invalid option 'bogus')")
  check("count", type(collectgarbage("count")), "number")
end

-- ---- C stack depth of nested coroutines (cstack.lua) ---------------------------------------------

function T.test_nested_coroutines_reach_stocks_depth()
  local count = 0
  local function foo()
    count = count + 1
    pcall(1)
    coroutine.wrap(foo)()
  end
  local err = message(foo)
  assert(err:find("C stack overflow"), err)
  -- stock reaches about 196 from the main chunk; a task's own frames take a few levels
  assert(count >= 185, "nested coroutine.wrap depth " .. count)

  count = 0
  local function bar()
    count = count + 1
    local ok, e = pcall(coroutine.wrap(bar))
    if not ok then error(e, 0) end
  end
  err = message(bar)
  assert(err:find("C stack overflow"), err)
  assert(count >= 90, "nested pcall(coroutine.wrap(f)) depth " .. count)
end

-- ---- xpcall ---------------------------------------------------------------------------------------

-- xpcall(f, debug.traceback) shows the frames stock shows: no "[C]: in ?" for the host's wrapper
-- above 'error' or between f and xpcall.
function T.test_xpcall_traceback_has_stocks_frames()
  local function f() error("boom") end
  local ok, tb = xpcall(f, debug.traceback)
  check("xpcall", ok, false)
  local lines = {}
  for line in tb:gmatch("[^\n]+") do lines[#lines + 1] = line end
  check("message", lines[1]:match("boom$"), "boom")
  check("traceback", lines[2], "stack traceback:")
  check("first frame", lines[3], "\t[C]: in function 'error'")
  assert(lines[4]:find("^\t[^\n]*test_stock%.lua:%d+: in "), tb)
  check("frame below f", lines[5], "\t[C]: in function 'xpcall'")
  check("a table error stays", select(2, xpcall(error, debug.traceback, { 1 }))[1], 1)
  check("results", select(2, xpcall(function(a, b) return a + b end, debug.traceback, 2, 3)), 5)
end

if STOCK then
  local names = {}
  for name in pairs(T) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do T[name]() end
  print("ok: " .. #names .. " tests pass under stock Lua")
end
return T
