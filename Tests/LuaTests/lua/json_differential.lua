-- Lookout side of JSONDifferentialTests: decodes every text of the corpus json_reference.py
-- wrote and compares the canonical form of the result (see that file) with Python's.
-- Called with the corpus text; prints "checked <n>" and one "MISMATCH" line per difference.
local corpus = ...
local json = require "json"

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local function canonical(v)
  if v == json.null then return "n" end
  local t = type(v)
  if t == "boolean" then return v and "t" or "f" end
  if t == "number" then
    if math.type(v) == "integer" then return "i" .. string.format("%d", v) end
    return "d" .. string.format("%016x", (string.unpack("<i8", string.pack("<d", v))))
  end
  if t == "string" then return "s" .. hex(v) .. ";" end
  assert(t == "table", "unexpected " .. t)
  if getmetatable(v) == json.array_mt then
    local parts = {}
    for i = 1, #v do parts[i] = canonical(v[i]) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys, byhex = {}, {}
  for k, x in pairs(v) do
    local h = hex(k)
    keys[#keys + 1] = h
    byhex[h] = canonical(x)
  end
  table.sort(keys)
  for i, h in ipairs(keys) do keys[i] = h .. ":" .. byhex[h] end
  return "{" .. table.concat(keys, ",") .. "}"
end

local checked, mismatches = 0, 0
for text, expected in corpus:gmatch("([^\t\n]*)\t([^\n]*)\n") do
  local ok, value = pcall(json.decode, text)
  local actual = ok and canonical(value) or "E"
  checked = checked + 1
  if actual ~= expected then
    mismatches = mismatches + 1
    if mismatches <= 20 then
      print(("MISMATCH %s: python %s, lookout %s%s"):format(#text > 80 and text:sub(1, 80) .. "..." or text,
        expected:sub(1, 120), actual:sub(1, 120), ok and "" or " (" .. tostring(value) .. ")"))
    end
  end
end
print("checked " .. checked .. ", mismatches " .. mismatches)
