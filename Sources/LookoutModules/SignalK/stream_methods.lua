local methods, open = ...
local error, type, require, setmetatable, pcall = error, type, require, setmetatable, pcall

function methods.deltas(self, opts)
  local ok, fetch, cursor = pcall(open, self, opts)
  if not ok then error(fetch, 2) end  -- blame the caller, not this file
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

function methods.on(self, pattern, fn)
  if type(pattern) ~= "string" then
    error("bad argument #1 to 'on' (string expected, got " .. type(pattern) .. ")", 2)
  end
  if type(fn) ~= "function" then
    error("bad argument #2 to 'on' (function expected, got " .. type(fn) .. ")", 2)
  end
  local spawn = require("task").spawn
  local next_delta, _, _, cursor = methods.deltas(self, { paths = { pattern } })
  local h = setmetatable({ pattern = pattern, _cursor = cursor, _stopped = false }, handler)
  h._runner = spawn(function()
    local loop <close> = cursor
    for d in next_delta do spawn(fn, d) end
  end)
  return h
end
