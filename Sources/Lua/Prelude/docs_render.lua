-- lookout._docs.render: the help pages of a module, a class, a function and an alias.
-- Part of lookout._docs (docs.lua); pure Lua 5.4.

local ipairs, math, string, table = ipairs, math, string, table
local fmt, sub, rep = string.format, string.sub, string.rep
local concat = table.concat
local text = require("lookout._docs.text")
local columns, wrap, reflow, aligned = text.columns, text.wrap, text.reflow, text.aligned

-- "name — summary" heading, wrapped.
local function heading(name, summary, width, out)
  if summary == "" then
    out[#out + 1] = name
  else
    wrap(name .. " — " .. summary, width, "", rep(" ", math.min(columns(name) + 3, 20)), out)
  end
end

local function section(title, out)
  out[#out + 1] = ""
  out[#out + 1] = title
end

local function field_rows(fields)
  local rows = {}
  for i, f in ipairs(fields) do
    rows[i] = { f.name .. (f.optional and "?" or ""), f.type, f.desc or "" }
  end
  return rows
end

local function render_function(f, width)
  local out = {}
  wrap(f.signature, width, "", "    ", out)
  if f.deprecated then
    out[#out + 1] = ""
    wrap("Deprecated." .. (f.deprecated ~= true and " " .. f.deprecated or ""), width, "", "", out)
  end
  if f.text ~= "" then -- summary and description, as written
    out[#out + 1] = ""
    reflow(f.text, width, "", out)
  end
  if #f.params > 0 then
    section("Parameters:", out)
    local rows = {}
    for i, p in ipairs(f.params) do
      rows[i] = { p.name .. (p.optional and "?" or ""), p.type, p.desc }
    end
    aligned(rows, width, "  ", 28, out)
  end
  if #f.returns > 0 then
    section("Returns:", out)
    local rows, named = {}, false
    for _, r in ipairs(f.returns) do named = named or r.name ~= nil end
    for i, r in ipairs(f.returns) do
      rows[i] = named and { r.type, r.name or "", r.desc } or { r.type, r.desc }
    end
    aligned(rows, width, "  ", 28, out)
  end
  if f.context ~= "" then
    out[#out + 1] = ""
    wrap("Context: " .. f.context, width, "", "  ", out)
  end
  if f.notes ~= "" then
    section("Notes:", out)
    reflow(f.notes, width, "  ", out)
  end
  if #f.overloads > 0 then
    section("Also callable as:", out)
    for _, o in ipairs(f.overloads) do out[#out + 1] = "  " .. o end
  end
  if f.see then
    out[#out + 1] = ""
    out[#out + 1] = "See also: " .. f.see
  end
  return concat(out, "\n")
end

-- The methods of a class as rows `  :stop   summary` (static functions as `.new`).
local function method_rows(class, rows, indent)
  for _, m in ipairs(class.methods) do
    rows[#rows + 1] = { indent .. sub(m.name, #class.name + 1), m.summary }
  end
  return rows
end

local function render_class(c, width)
  local out = {}
  heading(c.name, c.summary, width, out)
  if c.parent then out[#out + 1] = "(a kind of " .. c.parent .. ")" end
  if c.description ~= "" then
    out[#out + 1] = ""
    reflow(c.description, width, "", out)
  end
  if #c.fields > 0 then
    section("Fields:", out)
    aligned(field_rows(c.fields), width, "  ", 28, out)
  end
  if #c.methods > 0 then
    section("Methods:", out)
    local rows = {}
    for i, m in ipairs(c.methods) do rows[i] = { m.name, m.summary } end
    aligned(rows, width, "  ", 36, out)
  end
  return concat(out, "\n")
end

local function render_module(m, width)
  local out = {}
  heading(m.name, m.summary, width, out)
  if m.description ~= "" then
    out[#out + 1] = ""
    reflow(m.description, width, "", out)
  end
  local rows = {}
  for _, f in ipairs(m.functions) do
    if not f.class then rows[#rows + 1] = { f.name, f.summary } end
  end
  if #rows > 0 then
    section("Functions:", out)
    aligned(rows, width, "  ", 36, out)
  end
  if #m.fields > 0 then
    section("Fields:", out)
    local frows = field_rows(m.fields)
    for _, r in ipairs(frows) do r[1] = m.name .. "." .. r[1] end
    aligned(frows, width, "  ", 36, out)
  end
  if #m.class_names > 0 then
    section("Classes:", out)
    local crows = {}
    for _, name in ipairs(m.class_names) do
      local c = m.classes[name]
      crows[#crows + 1] = { c.name, c.summary }
      method_rows(c, crows, "  ")
    end
    aligned(crows, width, "  ", 36, out)
  end
  local first = m.functions[1]
  if first then
    out[#out + 1] = ""
    wrap(fmt('Use help "%s" or help(%s) for the details of a function.', first.name,
             first.name), width, "", "", out)
  end
  return concat(out, "\n")
end

local function render_alias(a, width)
  local out = {}
  heading(a.name, a.summary ~= "" and a.summary or a.type, width, out)
  if a.summary ~= "" and a.type ~= "" then out[#out + 1] = "type: " .. a.type end
  if a.description ~= "" then
    out[#out + 1] = ""
    reflow(a.description, width, "", out)
  end
  if #a.values > 0 then
    section("Values:", out)
    local rows = {}
    for i, v in ipairs(a.values) do rows[i] = { v.type, v.desc } end
    aligned(rows, width, "  ", 28, out)
  end
  return concat(out, "\n")
end

return {
  section = section, render_function = render_function, render_class = render_class,
  render_module = render_module, render_alias = render_alias,
}
