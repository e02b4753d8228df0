-- The prelude every Lookout state runs before any script: coroutines that relay host waits, `print`
-- to the host, and the sandbox (a confined `require` among others). It runs once per state with the `host`
-- table. README "How Lookout's Lua differs from Lua 5.4" lists every difference it makes.
--
-- Everything it calls later is captured here, before any script runs: a script may replace
-- globals such as `tostring`, and that must not change what the host relies on.
-- The string metatable stays visible and changeable (bwcoercion.lua and other stock idioms need
-- it): each script has a Lua state of its own, and host code never runs string methods.
local host = ...
local find_module = host.find_module
local raw_load = load

-- coroutine.resume/wrap relay host waits out of the script's own coroutines; the running task's
-- thread is the main coroutine for coroutine.running/isyieldable/yield (LuaShim coroutines.c).
host.open_coroutines(host.drop_wait)

-- print is stock's, writing through the host (the REPL prints it above the prompt; baselib.c).
host.open_print(host.write)

if not host.trusted then
  -- `load`, `require` and `collectgarbage` are LuaShim's (baselib.c): stock behaviour, except that
  -- binary chunks are refused, module names with "\0" too, and the collector cannot be stopped or
  -- tuned. `require` finds modules bundled with Lookout (package.preload) and Lua files in the
  -- script's folder (confined: ModuleSearch.swift), never C libraries.
  package.cpath = ""
  package.loadlib = nil
  package.path = host.search_path
  package.searchers = {
    package.searchers[1],   -- package.preload
    function(name)
      local source, path = find_module(name)
      if not source then return path end
      local chunk, err = raw_load(source, "@" .. path, "t")
      if not chunk then
        error("error loading module '" .. name .. "' from file '" .. path .. "':\n\t" .. err, 0)
      end
      return chunk, path
    end,
  }
  string.dump = nil
  dofile, loadfile = nil, nil
  package.searchpath = nil   -- it opens any path: it would tell a script which files exist
  io = nil
  package.loaded.io = nil
  os = { time = os.time, clock = os.clock, date = os.date, difftime = os.difftime }
  package.loaded.os = os
  debug = { traceback = debug.traceback }
  package.loaded.debug = debug
else
  -- The whole library, as stock: require searches the script's folder first, then LUA_PATH's (or
  -- Lua's default) path and package.cpath; only debug.sethook/gethook are LuaShim's, so that a
  -- script's hook shares the thread with the limit hook (shim.c).
  if host.search_path ~= "" then package.path = host.search_path .. ";" .. package.path end
  host.open_debug_hooks()
end
if os then os.exit = host.exit end
if os and host.virtual_now then
  -- Virtual time (lookout test): the wall clock scripts read is the virtual one.
  local virtual_now, raw_time, raw_date = host.virtual_now, os.time, os.date
  os.time = function(t) if t == nil then return virtual_now() end return raw_time(t) end
  os.date = function(format, t) return raw_date(format, t or virtual_now()) end
end
