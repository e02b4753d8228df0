-- lookout._docs.names: "did you mean" for the help system (prefix and edit distance).
-- Part of lookout._docs (docs.lua); pure Lua 5.4.

local ipairs, math, string, table = ipairs, math, string, table
local sub, find, match = string.sub, string.find, string.match
local sort = table.sort
local bytes_less = require("lookout._docs.text").bytes_less

-- Levenshtein distance between two short strings.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    local ca = string.byte(a, i)
    for j = 1, #b do
      local cost = (ca == string.byte(b, j)) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

local function last_segment(name)
  return match(name, "([^.:]*)$")
end

-- Up to five names close to `query`: the same prefix, or a small edit distance
-- (of the whole name, or of the last part when the query has no module).
local function suggestions(query, names)
  local q = query:lower()
  local limit = #q <= 4 and 1 or 2
  local scored = {}
  for _, name in ipairs(names) do
    local n = name:lower()
    local score
    if #q >= 2 and sub(n, 1, #q) == q then
      score = 0
    elseif math.abs(#n - #q) <= limit and distance(q, n) <= limit then
      score = distance(q, n)
    elseif not find(q, "[.:]") and find(n, "[.:]") then
      local seg = last_segment(n)
      if #q >= 3 and sub(seg, 1, #q) == q then
        score = 1
      elseif math.abs(#seg - #q) <= limit and distance(q, seg) <= limit then
        score = distance(q, seg) + 1
      end
    end
    if not score and find(q, "[.:]") and #n > #q and sub(n, -#q) == q
        and find(sub(n, -#q - 1, -#q - 1), "[.:]") then
      score = 1 -- the query is the tail of a name: "Task:cancel"
    end
    if score then scored[#scored + 1] = { name = name, score = score } end
  end
  sort(scored, function(a, b)
    if a.score ~= b.score then return a.score < b.score end
    if #a.name ~= #b.name then return #a.name < #b.name end
    return bytes_less(a.name, b.name)
  end)
  local out = {}
  for i = 1, math.min(5, #scored) do out[i] = scored[i].name end
  return out
end


return suggestions
