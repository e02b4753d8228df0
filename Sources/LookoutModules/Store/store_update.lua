local store, p = ...
local can_wait, setmetatable, error, type = p.can_wait, setmetatable, error, type
local ATTEMPTS = 20

function store.update(...)
  local problem = p.check(...)  -- "no value" for a missing argument, like the bindings
  local key, fn = ...
  if problem then error(problem, 2) end
  if not can_wait() then error(p.cannot_wait, 2) end
  local token, holder = p.lock(key)
  while not token do
    if type(holder) == "string" then error(holder, 2) end
    p.wait(key, holder)
    token, holder = p.lock(key)
  end
  local release <close> = setmetatable({}, { __close = function() p.unlock(key, token) end })
  for _ = 1, ATTEMPTS do
    local ok, old, seen = p.read(key)
    if not ok then return nil, old end
    local new = fn(old)
    local written, err = p.swap(key, seen, new)
    if written then return new end
    if written == nil then
      if type(err) == "string" then error(err, 2) end
      return nil, err
    end
  end
  return nil, p.conflict(key, ATTEMPTS)
end
