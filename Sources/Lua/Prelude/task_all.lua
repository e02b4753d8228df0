-- task.all, written in Lua over task.wait (loaded by TaskModule.swift).
local task = ...
local wait, pack, unpack, type, error = task.wait, table.pack, table.unpack, type, error
function task.all(list, timeout)
  if type(list) ~= "table" then
    error("bad argument #1 to 'all' (table of tasks expected, got " .. type(list) .. ")", 2)
  end
  local results, first_error = {}, nil
  for i = 1, #list do
    local r = pack(wait(list[i], timeout))
    if r[1] then results[i] = pack(unpack(r, 2, r.n))
    elseif not first_error then first_error = r[2] end
  end
  if first_error then return false, first_error end
  return true, results
end
