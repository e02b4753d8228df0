-- lookout._docs.text: text helpers of the help system (wrapping, reflowing, aligned tables).
-- Part of lookout._docs (docs.lua); pure Lua 5.4.

local ipairs, math, string, table, utf8 = ipairs, math, string, table, utf8
local find, match, gsub, rep = string.find, string.match, string.gsub, string.rep
local concat, sort = table.concat, table.sort

local function trim(s)
  return match(s, "^%s*(.-)%s*$")
end

-- Columns a single line takes (one per UTF-8 character).
local function columns(s)
  return utf8.len(s) or #s
end

local function pad(s, width)
  return s .. rep(" ", width - columns(s))
end

-- Byte-wise string order, independent of the C locale.
local function bytes_less(a, b)
  if a == b then return false end
  local n = #a < #b and #a or #b
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local function sorted(list)
  sort(list, bytes_less)
  return list
end

-- Wraps words into lines of at most `width` columns; the first line starts with
-- `first`, the others with `rest`. A word longer than a line gets a line of its own.
local function wrap(text, width, first, rest, out)
  out = out or {}
  local line, empty = first, true
  for word in text:gmatch("%S+") do
    if not empty and columns(line) + 1 + columns(word) > width then
      out[#out + 1] = line
      line, empty = rest, true
    end
    line = empty and line .. word or line .. " " .. word
    empty = false
  end
  if not empty then out[#out + 1] = line end
  return out
end

-- Reflows doc text: paragraphs (separated by blank lines) are wrapped at word
-- boundaries, list items (`- `, `* `, `1. `) get a hanging indent, lines indented by
-- four or more spaces and ``` fenced blocks are kept as they are.
local function reflow(text, width, indent, out)
  out = out or {}
  local para, fenced = nil, false -- para: { first = prefix, rest = prefix, words = {} }
  local function flush()
    if para then
      wrap(concat(para.words, " "), width, para.first, para.rest, out)
      para = nil
    end
  end
  local function blank()
    if #out > 0 and out[#out] ~= "" then out[#out + 1] = "" end
  end
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if find(line, "^%s*```") then
      flush()
      fenced = not fenced
      out[#out + 1] = indent .. line
    elseif fenced or find(line, "^    ") then
      flush()
      out[#out + 1] = indent .. line
    elseif trim(line) == "" then
      flush()
      blank()
    else
      local marker, body = match(line, "^%s*([-*] )(.*)$")
      if not marker then marker, body = match(line, "^%s*(%d+[.)] )(.*)$") end
      if marker then
        flush()
        para = { first = indent .. marker, rest = indent .. rep(" ", #marker), words = { body } }
      else
        para = para or { first = indent, rest = indent, words = {} }
        para.words[#para.words + 1] = trim(line)
      end
    end
  end
  flush()
  while out[#out] == "" do out[#out] = nil end
  return out
end

-- Lines of an aligned table: rows are lists of cells; the last cell is free text wrapped
-- under its column. A cell wider than `cap` sends the text to the next line.
local function aligned(rows, width, indent, cap, out)
  out = out or {}
  cap = cap or 28
  local ncols = 0
  for _, row in ipairs(rows) do ncols = math.max(ncols, #row) end
  local widths = {}
  for c = 1, ncols - 1 do
    widths[c] = 0
    for _, row in ipairs(rows) do
      local w = row[c] and columns(row[c]) or 0
      if w <= cap then widths[c] = math.max(widths[c], w) end
    end
  end
  for _, row in ipairs(rows) do
    local line, overflow = indent, false
    for c = 1, ncols - 1 do
      local cell = row[c] or ""
      if columns(cell) > widths[c] then overflow = true end
      line = line .. (overflow and cell .. "  " or pad(cell, widths[c] + 2))
    end
    local text = row[ncols] or ""
    local column = 0
    for c = 1, ncols - 1 do column = column + widths[c] + 2 end
    local hang = indent .. rep(" ", column)
    local narrow = columns(hang) > width - 20
    if text == "" then
      out[#out + 1] = (gsub(line, "%s+$", ""))
    elseif overflow or narrow then -- the text goes on the next lines
      out[#out + 1] = (gsub(line, "%s+$", ""))
      if narrow then hang = indent .. "    " end
      wrap(text, width, hang, hang, out)
    else
      wrap(text, width, line, hang, out)
    end
  end
  return out
end


return {
  trim = trim, columns = columns, bytes_less = bytes_less, sorted = sorted, wrap = wrap,
  reflow = reflow, aligned = aligned,
}
