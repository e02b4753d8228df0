local fetch = ...
local type, error, pairs, tostring = type, error, pairs, tostring
local mt = { __name = "nightscout remote command" }
mt.__index = mt
mt.__tostring = function(c)
  return "nightscout remote command " .. tostring(c.id or "(not stored)") .. " " .. tostring(c.command)
    .. " " .. tostring(c.state)
end
local final = { success = true, error = true }
local function follows(self) return self.via == "v2" and self.id ~= nil and not final[self.state] end

function mt:status()
  if not follows(self) then return self.state, self.message end
  local state, message = fetch(self._client, self.id, self.created, 0, 0)
  if state == nil then return nil, message end
  self.state, self.message = state, message
  return state, message
end

function mt:wait(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #1 to 'wait' (table expected, got " .. type(opts) .. ")", 2)
  end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "timeout" and k ~= "interval" then
      error("bad argument #1 to 'wait' (unknown option '" .. tostring(k) .. "' (known: interval, timeout))", 2)
    end
  end
  if not follows(self) then return self end
  local state, message, timed_out = fetch(self._client, self.id, self.created, opts.timeout or 300, opts.interval or 5)
  if state == nil then return nil, message end
  self.state, self.message = state, message
  if timed_out then return nil, timed_out end
  return self
end
return mt
