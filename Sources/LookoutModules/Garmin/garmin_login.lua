local methods = ...
if methods.login then return end
local start, finish = methods._login_start, methods._login_finish
methods._login_start, methods._login_finish = nil, nil
local type, error, tostring = type, error, tostring
methods.login = function(self, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #1 to 'login' (table expected, got " .. type(opts) .. ")", 2)
  end
  local handler = opts and opts.mfa
  if handler ~= nil and type(handler) ~= "function" then
    error("bad argument #1 to 'login' (opts.mfa: expected a function, got " .. type(handler) .. ")", 2)
  end
  local pending, err = start(self, handler ~= nil)
  if pending == nil then return nil, err end
  if pending == true then return true end
  local code = handler()
  if code == nil then code = "" end  -- no code: finish answers nil, err (mfa_required)
  if type(code) == "number" then code = string.format("%d", code) end
  if type(code) ~= "string" then
    error("garmin login: the MFA handler must return the code as a string, got " .. type(code), 2)
  end
  return finish(self, pending, code)
end
