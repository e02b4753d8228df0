-- The prelude every Lookout state runs before any script: coroutine relays for host waits, a safe
-- `load`, a confined `require`, and the sandbox. It runs once per state with the `host` table.
--
-- Everything it calls later is captured here, before any script runs: a script may replace
-- globals such as `coroutine.status` or `tostring`, and that must not change how waits relay.
local host = ...
local AWAIT = host.await_token
local drop_wait, find_module = host.drop_wait, host.find_module
local pack, unpack, select, type, error = table.pack, table.unpack, select, type, error
local tostring, concat, write = tostring, table.concat, host.write
local find, raw_require = string.find, require
local raw_resume, raw_yield, raw_create = coroutine.resume, coroutine.yield, coroutine.create
local isyieldable, raw_close, raw_status = coroutine.isyieldable, coroutine.close, coroutine.status

-- A host function waiting inside a coroutine the script made yields the await token to that
-- coroutine's resumer. Pass the token on to the scheduler (parking the whole task), and hand the
-- results back in when the wait is over.
local function relay(co, r)
  while r[1] and r[2] == AWAIT and raw_status(co) == "suspended" do
    if not isyieldable() then
      drop_wait()
      return pack(false, "cannot wait inside this coroutine: it was resumed from code that cannot "
        .. "yield (a table.sort comparator, a string.gsub callback, __tostring or the top level of "
        .. "a required file); start the work with task.spawn(fn) instead")
    end
    r = pack(raw_resume(co, raw_yield(AWAIT)))
  end
  return r
end

function coroutine.resume(co, ...)
  local r = relay(co, pack(raw_resume(co, ...)))
  return unpack(r, 1, r.n)
end

function coroutine.wrap(f)
  local co = raw_create(f)
  return function(...)
    local r = relay(co, pack(raw_resume(co, ...)))
    if r[1] then return unpack(r, 2, r.n) end
    if raw_status(co) == "dead" then raw_close(co) end
    error(r[2], 0)
  end
end

-- `load` reads text only (binary chunks can break out of any sandbox) and keeps the caller's
-- environment unless one is given.
local raw_load = load
function load(chunk, name, mode, ...)
  if mode ~= nil and mode ~= "t" and mode ~= "bt" then
    error("bad argument #3 to 'load' (Lookout loads text chunks only)", 2)
  end
  if select("#", ...) > 0 then return raw_load(chunk, name, "t", ...) end
  return raw_load(chunk, name, "t")
end

-- `require` finds modules bundled with Lookout (package.preload) and Lua files in the script's
-- folder, never C libraries.
package.cpath = ""
package.loadlib = nil
package.path = host.search_path
package.searchers = {
  package.searchers[1],   -- package.preload
  function(name)
    local source, path = find_module(name)
    if not source then return path end
    local chunk, err = raw_load(source, "@" .. path, "t")
    if not chunk then error(err, 0) end
    return chunk, path
  end,
}

-- Lua's own `require` hands searchers the name as C text, cut at the first "\0", so
-- `require "x\0anything"` would load x.lua: refuse such names before they get there.
function require(name)
  if type(name) == "string" and find(name, "\0", 1, true) then
    error("bad argument #1 to 'require' (module names cannot contain '\\0')", 2)
  end
  return raw_require(name)
end

string.dump = nil
local raw_collectgarbage = collectgarbage
local allowed_gc = { collect = true, count = true, step = true, isrunning = true }
function collectgarbage(opt, ...)
  opt = opt or "collect"
  if not allowed_gc[opt] then
    error("bad argument #1 to 'collectgarbage' ('" .. tostring(opt) .. "' is not allowed in Lookout scripts)", 2)
  end
  return raw_collectgarbage(opt, ...)
end

-- print goes to the host's output (the REPL prints it above the prompt).
function print(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  write(concat(parts, "\t"))
end

local traceback = debug.traceback
if not host.trusted then
  dofile, loadfile = nil, nil
  package.searchpath = nil   -- it opens any path: it would tell a script which files exist
  io = nil
  package.loaded.io = nil
  os = { time = os.time, clock = os.clock, date = os.date, difftime = os.difftime }
  package.loaded.os = os
end
if os then os.exit = host.exit end
if os and host.virtual_now then
  -- Virtual time (lookout test): the wall clock scripts read is the virtual one.
  local virtual_now, raw_time, raw_date = host.virtual_now, os.time, os.date
  os.time = function(t) if t == nil then return virtual_now() end return raw_time(t) end
  os.date = function(format, t) return raw_date(format, t or virtual_now()) end
end
debug = { traceback = traceback }
package.loaded.debug = debug

-- Scripts cannot change the string methods ("x"):upper() relies on.
getmetatable("").__metatable = false
