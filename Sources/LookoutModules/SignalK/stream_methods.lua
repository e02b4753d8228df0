local methods, open, boat_mt = ...
local error, type, require, setmetatable, pcall, pairs, next = error, type, require, setmetatable, pcall, pairs, next

-- The host anchors what it runs: a boat whose <close> variable ends while `on` handlers run
-- stays open for them, and closes when the last one stops (or when the script ends).
local handlers_of = setmetatable({}, { __mode = "k" })  -- boat -> { [handler] = true }
local close_deferred = setmetatable({}, { __mode = "k" })  -- boat -> true
local close_now = boat_mt.__close
local function has_running(boat)
  for h in pairs(handlers_of[boat] or {}) do
    if h:running() then return true end
  end
  return false
end
boat_mt.__close = function(boat, err)
  if has_running(boat) then
    close_deferred[boat] = true
    return
  end
  return close_now(boat, err)
end
local function forget(h)
  local boat = h._boat
  local set = handlers_of[boat]
  if set then
    set[h] = nil
    if next(set) == nil then handlers_of[boat] = nil end
  end
  if close_deferred[boat] and not has_running(boat) then
    close_deferred[boat] = nil
    close_now(boat)
  end
end

local function open_loop(self, opts)
  local ok, fetch, cursor, spawn_each = pcall(open, self, opts)
  if not ok then error(fetch, 3) end  -- blame the caller, not this file
  return fetch, cursor, spawn_each
end

function methods.deltas(self, opts)
  local fetch, cursor = open_loop(self, opts)
  local batch, i, n = nil, 0, 0
  return function()
    while true do
      if i < n then
        i = i + 1
        return batch[i]
      end
      local b = fetch()
      if b == nil then return nil end
      if b then batch, i, n = b, 0, #b end
    end
  end, nil, nil, cursor
end

local handler = { __name = "signalk.handler" }
handler.__index = handler
function handler:stop()
  if self._stopped then return false end
  self._stopped = true
  self._cursor:close()
  self._runner:cancel()
  forget(self)
  return true
end
function handler:running()
  return not self._stopped and self._runner:status() ~= "done" and self._runner:status() ~= "failed"
    and self._runner:status() ~= "cancelled"
end
handler.__close = function(h) h:stop() end
handler.__tostring = function(h)
  return "signalk handler " .. h.pattern .. (h:running() and "" or " (stopped)")
end

function methods.on(self, pattern, fn, opts)
  if type(pattern) ~= "string" then
    error("bad argument #1 to 'on' (string expected, got " .. type(pattern) .. ")", 2)
  end
  if type(fn) ~= "function" then
    error("bad argument #2 to 'on' (function expected, got " .. type(fn) .. ")", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #3 to 'on' (table expected, got " .. type(opts) .. ")", 2)
  end
  for k in pairs(opts or {}) do
    if k ~= "meta" then error("bad argument #3 to 'on' (unknown option '" .. (type(k) == "string" and k or type(k)) .. "' (known: meta))", 2) end
  end
  local spawn = require("task").spawn
  local _, cursor, spawn_each = open_loop(self, { paths = { pattern }, meta = opts and opts.meta })
  local h = setmetatable({ pattern = pattern, _cursor = cursor, _stopped = false, _boat = self }, handler)
  h._runner = spawn(function()
    local loop <close> = cursor
    -- spawn_each starts fn(d) as a task per buffered value; false: woken, ask again; nil: ended
    while spawn_each(fn) ~= nil do end
  end)
  local set = handlers_of[self] or {}
  handlers_of[self] = set
  set[h] = true
  return h
end
