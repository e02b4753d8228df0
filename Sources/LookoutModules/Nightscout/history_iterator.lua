local fetch = ...
local error = error
local page, i, more = nil, 0, true
return function()
  while true do
    if page and i < #page then
      i = i + 1
      return page[i]
    end
    if not more then return nil end
    local p, flag = fetch()
    if p == nil then error(flag, 2) end
    page, i, more = p, 0, flag
  end
end
