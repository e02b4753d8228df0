-- The `alert` library (see Stubs/alert.lua). Loaded with a table of host functions:
-- host.now() (epoch ms, the script's clock), host.load/save/ack (the state database),
-- host.local_minutes(ms), host.channels(), host.warn(text), host.script.
local host = ...
local notify = require "notify"
local json = require "json"

local M = {}
local MINUTE = 60000
local SEVERITIES = { urgent = true, warning = true, info = true }
local alerts, order = {}, {}

-- Durations: seconds as a number, or "90s", "15m", "2h", "1d", "500ms". Returns milliseconds.
local UNITS = { ms = 1, s = 1000, m = 60000, min = 60000, h = 3600000, d = 86400000 }
-- The range is the host's (LuaRange.duration): host.duration(seconds) returns them, or nil and why.
local function duration(v, what, level)
  local seconds
  if type(v) == "number" then seconds = v end
  if type(v) == "string" then
    local n, unit = v:match("^%s*(%d+%.?%d*)%s*(%a+)%s*$")
    if n and UNITS[unit] then seconds = tonumber(n) * UNITS[unit] / 1000 end
  end
  if seconds then
    local ok, problem = host.duration(seconds, type(v) == "string" and ('"' .. v .. '"') or nil)
    if ok then return math.floor(ok * 1000) end
    error(what .. ": " .. problem, (level or 2) + 1)
  end
  error(what .. ': expected a duration such as "5m" or "90s", got ' .. (type(v) == "string" and ('"' .. v .. '"') or type(v)), (level or 2) + 1)
end

-- A duration as people read it in a notification: "40 s", "15 min", "1 h 10 min", "2 h".
local function short(ms)
  ms = math.max(0, ms)
  if ms < MINUTE then return string.format("%d s", ms // 1000) end
  if ms < 60 * MINUTE then return string.format("%d min", ms // MINUTE) end
  local h, m = ms // (60 * MINUTE), (ms % (60 * MINUTE)) // MINUTE
  return m == 0 and string.format("%d h", h) or string.format("%d h %d min", h, m)
end

-- MARK: conditions. A condition is {kind=, eval=function(ctx, i) -> true|false|nil}, where nil
-- means "cannot judge" (not enough data); it is judged at point i of ctx.points (oldest first).

local cond_mt = { __name = "alert.Condition" }
cond_mt.__index = cond_mt
cond_mt.__tostring = function(c) return "alert condition " .. c.text end
local function condition(kind, text, eval)
  return setmetatable({ kind = kind, text = text, eval = eval }, cond_mt)
end
local function is_condition(c) return getmetatable(c) == cond_mt end
local function check_condition(c, what, level)
  if not is_condition(c) then
    error(what .. ": expected a condition (alert.below, alert.above, …), got " .. type(c), (level or 2) + 1)
  end
  return c
end
local function number_arg(x, fname)
  if type(x) ~= "number" then error("bad argument #1 to 'alert." .. fname .. "' (number expected, got " .. type(x) .. ")", 3) end
  return x
end

-- A threshold on the point's value (a value that is not a number cannot be judged).
local function threshold(name, x, test)
  return condition(name, name .. " " .. x, function(ctx, i)
    local v = ctx.points[i].value
    if type(v) ~= "number" then return nil end
    return test(v)
  end)
end

function M.below(x)
  number_arg(x, "below")
  return threshold("below", x, function(v) return v < x end)
end

function M.above(x)
  number_arg(x, "above")
  return threshold("above", x, function(v) return v > x end)
end

function M.when(fn)
  if type(fn) ~= "function" then error("bad argument #1 to 'alert.when' (function expected, got " .. type(fn) .. ")", 2) end
  return condition("when", "custom", function(ctx, i)
    local p = ctx.points[i]
    local r = fn(p.value, p.time, ctx.points, i)
    if r == nil then return nil end
    return r and true or false
  end)
end

-- Held for the whole window: true only when every point from the last one at or before the
-- window's start up to point i holds, with no gap longer than the alert's stale window.
function M.sustained(c, span)
  check_condition(c, "bad argument #1 to 'alert.sustained'", 2)
  local window = duration(span, "bad argument #2 to 'alert.sustained'", 2)
  local sustained = condition("sustained", c.text .. " for " .. short(window), function(ctx, i)
    local points = ctx.points
    local start = points[i].time - window
    local first
    for k = i, 1, -1 do
      if points[k].time <= start then first = k break end
    end
    local unknown = first == nil
    for k = first or 1, i do
      if k > (first or 1) and points[k].time - points[k - 1].time > ctx.max_gap then unknown = true end
      local r = c.eval(ctx, k)
      if r == false then return false end
      if r == nil then unknown = true end
    end
    if unknown then return nil end
    return true
  end)
  -- Why it does not hold yet: "below 70 for 9 min of 15 min" (how long the inner condition has
  -- held, without a gap, up to point i), or nil when it does not hold at point i at all.
  sustained.progress = function(ctx, i)
    local points, k = ctx.points, i
    if c.eval(ctx, i) ~= true then return nil end
    while k > 1 and c.eval(ctx, k - 1) == true and points[k].time - points[k - 1].time <= ctx.max_gap do k = k - 1 end
    return c.text .. " for " .. short(points[i].time - points[k].time) .. " of " .. short(window)
  end
  return sustained
end

local function rate(direction, per_minute, over)
  local fname = direction < 0 and "falling" or "rising"
  number_arg(per_minute, fname)
  if per_minute < 0 then error("bad argument #1 to 'alert." .. fname .. "' (expected a rate of at least 0 per minute)", 3) end
  local window = over and duration(over, "bad argument #2 to 'alert." .. fname .. "'", 3) or 15 * MINUTE
  return condition(fname, fname .. " " .. per_minute .. "/min", function(ctx, i)
    local points = ctx.points
    local p = points[i]
    local j
    for k = 1, i - 1 do
      if points[k].time >= p.time - window then j = k break end
    end
    if not j then return nil end
    local q = points[j]
    local span = p.time - q.time
    if span < window / 2 or type(p.value) ~= "number" or type(q.value) ~= "number" then return nil end
    local per_min = (p.value - q.value) / (span / MINUTE)
    return direction * per_min >= per_minute
  end)
end
function M.falling(per_minute, over) return rate(-1, per_minute, over) end
function M.rising(per_minute, over) return rate(1, per_minute, over) end

local function list_of_conditions(list, fname)
  if type(list) ~= "table" or #list == 0 then error("bad argument #1 to 'alert." .. fname .. "' (a list of conditions expected)", 3) end
  local texts = {}
  for k, c in ipairs(list) do
    check_condition(c, "bad argument #1 to 'alert." .. fname .. "' (item " .. k .. ")", 3)
    texts[#texts + 1] = c.text
  end
  return table.concat(texts, ", ")
end

-- all{…} stops at the first false, any{…} at the first true; otherwise "cannot judge" wins over
-- the default.
local function combinator(fname, decisive)
  return function(list)
    local text = list_of_conditions(list, fname)
    return condition(fname, fname .. "{" .. text .. "}", function(ctx, i)
      local unknown = false
      for _, c in ipairs(list) do
        local r = c.eval(ctx, i)
        if r == decisive then return decisive end
        if r == nil then unknown = true end
      end
      if unknown then return nil end
      return not decisive
    end)
  end
end
M.all = combinator("all", false)
M.any = combinator("any", true)

function M.not_(c)
  check_condition(c, "bad argument #1 to 'alert.not_'", 2)
  return condition("not", "not " .. c.text, function(ctx, i)
    local r = c.eval(ctx, i)
    if r == nil then return nil end
    return not r
  end)
end

function M.none(list)
  local any = M.any(list)
  return M.not_(any)
end

-- MARK: definitions

local alert_mt = { __name = "alert.Alert" }
alert_mt.__index = alert_mt
-- Before its first check an alert has no state (`st`): it shows as "new"; raw reads, so nothing
-- a script put in the alert table can make tostring raise.
alert_mt.__tostring = function(a)
  local st = rawget(a, "st")
  local state = type(st) == "table" and rawget(st, "state") or "new"
  return "alert " .. tostring(rawget(a, "id")) .. " (" .. tostring(state) .. ")"
end

local KNOWN = {
  id = "string", title = "string", severity = "string", series = "function", when = "condition", clear = "condition",
  stale = "duration", notify = "list", escalate = "table", repeat_every = "duration", quiet_hours = "table",
  message = "any", resolved = "boolean", stale_notify = "boolean", stale_severity = "string", ack_expires = "duration", max_gap = "duration",
  units = "string",
}

local function clock_arg(v, what, level)
  level = level or 4
  if type(v) ~= "string" then error(what .. ': expected a time such as "23:00"', level) end
  local h, m = v:match("^(%d%d?):(%d%d)$")
  h, m = tonumber(h), tonumber(m)
  if not h or h > 23 or m > 59 then error(what .. ': expected a time such as "23:00", got "' .. v .. '"', level) end
  return h * 60 + m
end

-- Channels: names, or {channel = "name", from = "23:00", to = "07:00"} (only at those local times).
local function channels_arg(v, what)
  if type(v) == "string" then v = { v } end
  if type(v) ~= "table" then error(what .. ": expected a list of channel names", 3) end
  local out = {}
  for k, entry in ipairs(v) do
    local item = what .. "[" .. k .. "]"
    if type(entry) == "table" then
      if type(entry.channel) ~= "string" or entry.channel == "" then error(item .. ".channel: expected a channel name", 3) end
      if (entry.from == nil) ~= (entry.to == nil) then error(item .. ": give both from and to, or neither", 3) end
      out[#out + 1] = { name = entry.channel, from = entry.from and clock_arg(entry.from, item .. ".from"),
                        to = entry.to and clock_arg(entry.to, item .. ".to") }
    elseif type(entry) == "string" and entry ~= "" then
      out[#out + 1] = { name = entry }
    else
      error(item .. ": expected a channel name or {channel = …, from = …, to = …}", 3)
    end
  end
  return out
end


function M.define(opts)
  if type(opts) ~= "table" then error("bad argument #1 to 'alert.define' (table expected, got " .. type(opts) .. ")", 2) end
  for k, v in pairs(opts) do
    local kind = KNOWN[k]
    if not kind then
      local names = {}
      for n in pairs(KNOWN) do names[#names + 1] = n end
      table.sort(names)
      error("alert.define: unknown option '" .. tostring(k) .. "' (known: " .. table.concat(names, ", ") .. ")", 2)
    end
    if kind == "condition" then check_condition(v, "alert.define: opts." .. k, 2)
    elseif kind == "duration" then duration(v, "alert.define: opts." .. k, 2)
    elseif kind ~= "any" and kind ~= "list" and type(v) ~= kind then
      error("alert.define: opts." .. k .. ": expected a " .. kind .. ", got " .. type(v), 2)
    end
  end
  local id = opts.id
  if type(id) ~= "string" or not id:match("^[%w_%.%-]+$") then
    error("alert.define: opts.id: required, letters, digits, '-', '_' and '.' only", 2)
  end
  -- A script bound to many profiles ([serve.bind], `script.lua@child1`) keeps one alert per profile.
  local bound = host.script and host.script:match("@([^@]+)$")
  local title = opts.title or id
  if bound then id, title = id .. "." .. bound, title .. " (" .. bound .. ")" end
  if alerts[id] then error("alert.define: an alert '" .. id .. "' is already defined", 2) end
  if not opts.series then error("alert.define: opts.series: required (a function returning value, time)", 2) end
  if not opts.when then error("alert.define: opts.when: required (a condition such as alert.below(55))", 2) end
  local severity = opts.severity or "warning"
  if not SEVERITIES[severity] then error('alert.define: opts.severity: expected "urgent", "warning" or "info", got "' .. severity .. '"', 2) end
  local stale_severity = opts.stale_severity or severity
  if not SEVERITIES[stale_severity] then error('alert.define: opts.stale_severity: expected "urgent", "warning" or "info"', 2) end
  if opts.units ~= nil and opts.units ~= "mg/dL" and opts.units ~= "mmol" then
    error('alert.define: opts.units: expected "mg/dL" or "mmol" (the series is glucose in mg/dL), got "' .. opts.units .. '"', 2)
  end
  if opts.message ~= nil and type(opts.message) ~= "string" and type(opts.message) ~= "function" then
    error("alert.define: opts.message: expected a string or a function(value, time)", 2)
  end
  local a = setmetatable({
    id = id, title = title, severity = severity, stale_severity = stale_severity, units = opts.units,
    series = opts.series, when = opts.when, clear = opts.clear or M.not_(opts.when),
    stale = duration(opts.stale or "15m", "alert.define: opts.stale"),
    notify = channels_arg(opts.notify or {}, "alert.define: opts.notify"),
    repeat_every = opts.repeat_every and duration(opts.repeat_every, "alert.define: opts.repeat_every"),
    ack_expires = opts.ack_expires and duration(opts.ack_expires, "alert.define: opts.ack_expires")
      or (severity == "urgent" and 30 * MINUTE or nil),
    message = opts.message, resolved = opts.resolved or false, stale_notify = opts.stale_notify ~= false,
    escalate = {}, st = nil,
  }, alert_mt)
  a.max_gap = opts.max_gap and duration(opts.max_gap, "alert.define: opts.max_gap") or a.stale
  for k, step in ipairs(opts.escalate or {}) do
    local what = "alert.define: opts.escalate[" .. k .. "]"
    if type(step) ~= "table" then error(what .. ": expected {after = \"10m\", notify = {…}}", 2) end
    a.escalate[k] = { after = duration(step.after, what .. ".after"), notify = channels_arg(step.notify, what .. ".notify") }
    if k > 1 and a.escalate[k].after < a.escalate[k - 1].after then error(what .. ".after: steps must be in increasing order", 2) end
  end
  if opts.quiet_hours then
    local q = opts.quiet_hours
    a.quiet = { from = clock_arg(q.from, "alert.define: opts.quiet_hours.from", 3),
                to = clock_arg(q.to, "alert.define: opts.quiet_hours.to", 3) }
  end
  -- How far back points are kept: the longest window a condition may look at, plus the gap.
  a.keep = math.max(a.stale, 60 * MINUTE) + a.stale
  -- A channel that does not exist would make the alert silent: say so now, not at 3 am.
  local named = {}
  for _, e in ipairs(a.notify) do named[#named + 1] = e.name end
  for _, step in ipairs(a.escalate) do for _, e in ipairs(step.notify) do named[#named + 1] = e.name end end
  for _, c in ipairs(named) do
    if not host.has_channel(c) and not (c == "all" and #host.channels() > 0) then
      host.warn("alert " .. id .. ": no [notify." .. c .. "] channel is configured; its notifications will fail")
    end
  end
  alerts[id] = a
  order[#order + 1] = id
  return a
end

-- MARK: evaluation

local function fresh_state()
  return { state = "new", since = nil, episode = 0, points = {}, seq = 0, level = 0 }
end

-- Points from what `series` returned: value, time — or a list of {value, time} / {value=, time=}.
local function collect(a, now)
  local ok, v, t, d = pcall(a.series)
  if not ok then
    a.st.last_error = tostring(v)
    host.warn("alert " .. a.id .. ": series failed: " .. tostring(v))
    return
  end
  a.st.last_error = nil
  local got = {}
  if type(v) == "table" then
    for k, p in ipairs(v) do
      local value, time, direction = p.value or p[1], p.time or p[2], p.direction or p[3]
      if type(time) == "number" then
        got[#got + 1] = { value = value, time = math.floor(time), direction = type(direction) == "string" and direction or nil }
      else host.warn("alert " .. a.id .. ": series item " .. k .. " has no time; ignored") end
    end
  elseif v ~= nil then
    if type(t) == "number" then got[1] = { value = v, time = math.floor(t), direction = type(d) == "string" and d or nil }
    else host.warn("alert " .. a.id .. ": series returned a value without a time (epoch ms); ignored") end
  end
  for _, p in ipairs(got) do
    if type(p.value) ~= "number" and not a.warned_type then
      a.warned_type = true  -- once: thresholds and rates cannot judge it, the alert stays "unknown"
      host.warn("alert " .. a.id .. ": series gave a " .. type(p.value) .. " value; conditions need numbers")
    end
  end
  local points, seen = a.st.points, {}
  if type(v) == "table" and #got > 0 then
    -- A list is the source's whole view of its time span: a kept point inside that span that the
    -- list no longer has is gone from the source (a restarted or corrected data source, readings
    -- re-dated), and must not hold an alert back, or fire one, from a stale copy.
    local first, last = got[1].time, got[1].time
    for _, p in ipairs(got) do first, last = math.min(first, p.time), math.max(last, p.time) end
    local kept = {}
    for _, p in ipairs(points) do
      if p.time < first or p.time > last then kept[#kept + 1] = p end
    end
    points = kept
    a.st.points = points
  end
  for _, p in ipairs(points) do seen[p.time] = p end
  for _, p in ipairs(got) do
    if p.time > now + 2 * MINUTE then
      host.warn("alert " .. a.id .. ": ignored a point dated " .. short(p.time - now) .. " in the future")
    elseif seen[p.time] then
      -- the same reading again, or a corrected one: the newest wins
      seen[p.time].value, seen[p.time].direction = p.value, p.direction
    else
      seen[p.time] = p
      points[#points + 1] = p
    end
  end
  table.sort(points, function(x, y) return x.time < y.time end)
  local keep = {}
  for _, p in ipairs(points) do
    if p.time >= now - a.keep then keep[#keep + 1] = p end
  end
  a.st.points = keep
end

-- Whether local time `now` is in [from, to) (a window may wrap midnight).
local function in_window(from, to, now)
  local m = host.local_minutes(now)
  if from <= to then return m >= from and m < to end
  return m >= from or m < to
end

local function in_quiet(a, now)
  return a.quiet ~= nil and in_window(a.quiet.from, a.quiet.to, now)
end

-- A value as people read it: glucose (opts.units) with its unit, the other in parentheses and
-- the trend arrow; anything else as it is.
local function show(a, p)
  if a.units and type(p.value) == "number" then
    local ok, text = pcall(require("nightscout").format_bg, p.value, { units = a.units, direction = p.direction })
    if ok then return text end
  end
  return tostring(p.value)
end

local function describe(a, st, now)
  local p = st.points[#st.points]
  if st.cond == "stale" then
    if not p then return "No data" end
    return "No data for " .. short(now - p.time) .. ", last " .. show(a, p)
  end
  if type(a.message) == "function" then
    local ok, text = pcall(a.message, p and p.value, p and p.time)
    if ok and text ~= nil then return tostring(text) end
  elseif type(a.message) == "string" then
    return a.message
  end
  if not p then return a.title end
  return a.title .. ": " .. show(a, p)
end

-- The channel names for `entries` at `now`: "all" expanded, time-routed entries only in their
-- window; if routing leaves none, every entry (an alert is never silenced by its routes).
local function channel_list(entries, now)
  local function collect(routed)
    local out, seen = {}, {}
    local function add(name) if not seen[name] then seen[name] = true out[#out + 1] = name end end
    for _, e in ipairs(entries) do
      if not routed or not e.from or in_window(e.from, e.to, now) then
        if e.name == "all" and not host.has_channel("all") then
          for _, c in ipairs(host.channels()) do add(c) end
        else
          add(e.name)
        end
      end
    end
    return out
  end
  local routed = collect(true)
  if #routed == 0 then return collect(false) end
  return routed
end

local function send(a, st, now, channels, kind, severity, text)
  st.seq = st.seq + 1
  local results = {}
  for _, channel in ipairs(channel_list(channels, now)) do
    local item, err = notify.send(channel, {
      -- Missing data is its own problem, not the condition's: "No data (Low)".
      title = st.cond == "stale" and ("No data (" .. a.title .. ")") or a.title, message = text, severity = severity, alert_id = a.id, kind = kind,
      episode = st.episode,
      -- Waits for the first attempt (at most 5 s): a one-shot `lookout run` delivers before it exits.
      id = "alert:" .. a.id .. ":" .. st.episode .. ":" .. st.seq .. ":" .. channel,
      state = kind == "resolved" and "normal" or nil,
    })
    if not item then host.warn("alert " .. a.id .. ": notify " .. channel .. ": " .. tostring(err and err.message or err)) end
    results[#results + 1] = channel
  end
  st.last_notified = now
  return results
end

-- The channels due at `level` (0 = the first notification): the alert's own plus every step's up to it.
local function channels_at(a, level)
  local out = {}
  for _, c in ipairs(a.notify) do out[#out + 1] = c end
  for k = 1, level do
    for _, c in ipairs(a.escalate[k].notify) do out[#out + 1] = c end
  end
  return out
end

-- The state the data says, and why in words people read in `lookout ack --list` and `status`.
local function judge(a, st, now)
  local points = st.points
  local latest = points[#points]
  if not latest then return "stale", "no data yet" end
  local last = " (last " .. show(a, latest) .. ", " .. short(now - latest.time) .. " ago)"
  if now - latest.time > a.stale then return "stale", "no data for " .. short(now - latest.time) .. last end
  local ctx = { points = points, now = now, max_gap = a.max_gap }
  -- Hysteresis survives a data gap: after "stale" that followed "firing", `clear` decides.
  local alerting = st.cond == "firing" or (st.cond == "stale" and st.stale_after_firing)
  if alerting then
    local c = a.clear.eval(ctx, #points)
    if c == true then return "ok", "cleared: " .. a.clear.text .. last end
    -- Between `when` and `clear` (hysteresis): still firing, on its way back.
    if a.when.eval(ctx, #points) == false then
      return "firing", "recovering: not " .. a.when.text .. " any more; clears when " .. a.clear.text .. last
    end
    return "firing", a.when.text .. "; clears when " .. a.clear.text .. last
  end
  local w = a.when.eval(ctx, #points)
  if w == true then return "firing", a.when.text .. last end
  if w == nil then return "unknown", "not enough data to judge " .. a.when.text .. last end
  local pending = a.when.progress and a.when.progress(ctx, #points)
  if pending then return "ok", "pending: " .. pending .. last end
  return "ok", "not " .. a.when.text .. last
end

local function load(a)
  local ok, data, ack, owner, snooze = host.load(a.id)
  if not ok then error("alert " .. a.id .. ": cannot read the state database: " .. tostring(data and data.message or data), 0) end
  if not a.st then
    if owner and owner ~= host.script then
      host.warn("alert " .. a.id .. ": the state database has this id from script " .. owner
        .. "; alert ids are shared by every script (two scripts defining one id share its state)")
    end
    a.st = fresh_state()
    if data then
      local ok, saved = pcall(json.decode, data)
      if ok and type(saved) == "table" then
        for k, v in pairs(saved) do a.st[k] = v end
        a.st.points = a.st.points or {}
      end
    end
  end
  return ack, snooze
end

local function save(a)
  local st = a.st
  local data = json.encode(st)
  local state = st.state == "new" and "unknown" or st.state
  local ok, err = host.save(a.id, a.title, a.severity, state, st.since or host.now(), st.episode, data)
  if not ok then error("alert " .. a.id .. ": cannot write the state database: " .. tostring(err and err.message or err), 0) end
end

-- One evaluation; returns the state.
function alert_mt:check()
  if getmetatable(self) ~= alert_mt then error("bad self to 'check' (alert expected); call it with ':'", 2) end
  local a = self
  local now = host.now()
  local ack, snooze = load(a)
  local st = a.st
  st.started = st.started or now
  collect(a, now)
  local before = st.cond
  local cond, why = judge(a, st, now)
  st.why = why
  -- With stale_notify = false, missing data alerts only when it interrupts a firing episode
  -- (a low whose readings stop is still a low); otherwise another alert reports the gap.
  local alerting = cond == "firing" or (cond == "stale"
    and (a.stale_notify or before == "firing" or (before == "stale" and st.stale_after_firing == true)))
  if alerting and cond ~= before then
    -- A new episode: firing and stale are different problems, each acknowledged on its own.
    st.episode = st.episode + 1
    st.episode_start = now
    st.esc_base = now
    st.level = 0
    st.last_notified = nil
    st.seq = 0
    st.acked_by, st.acked_at = nil, nil
    if st.snooze_episode then st.snoozed_until, st.snooze_episode = nil, nil end
  end
  if not alerting and before and (before == "firing" or before == "stale") then
    if a.resolved and st.last_notified then
      send(a, st, now, channels_at(a, st.level), "resolved", "info", a.title .. ": resolved")
    end
    if st.snooze_episode then st.snoozed_until, st.snooze_episode = nil, nil end
    st.acked_by, st.acked_at = nil, nil
  end
  if cond == "stale" then
    st.stale_after_firing = before == "firing" or (before == "stale" and st.stale_after_firing) or nil
  else
    st.stale_after_firing = nil
  end
  st.cond = cond
  if ack and ack.episode == st.episode and alerting then
    st.acked_by, st.acked_at = ack.by, ack.at
  end
  -- A snooze from outside (`lookout ack --snooze`, the web view): for this episode only, taken
  -- once (an unsnooze or its end is not undone by seeing it again).
  if snooze and snooze.episode == st.episode and alerting and st.snooze_from ~= snooze.at and now < snooze["until"] then
    st.snooze_from = snooze.at
    st.snoozed_until, st.snooze_episode = snooze["until"], st.episode
  end

  local state = cond
  if alerting then
    local severity = cond == "stale" and a.stale_severity or a.severity
    local acked = st.acked_at and (not a.ack_expires or now < st.acked_at + a.ack_expires)
    local snoozed = st.snoozed_until and now < st.snoozed_until
    if st.snoozed_until and not snoozed then
      -- The snooze ended while the alert still fires: start its ladder again.
      st.snoozed_until, st.snooze_episode = nil, nil
      st.esc_base, st.level, st.last_notified = now, 0, nil
    end
    if acked then state = "acked"
    elseif snoozed then state = "snoozed"
    else
      local quiet = severity ~= "urgent" and in_quiet(a, now)
      -- No data at all since start: say so only once the stale window has passed (no false
      -- alert while a freshly started script fetches its first value).
      local waiting = cond == "stale" and #st.points == 0 and now - st.started < a.stale
      if quiet or waiting then
        -- Held, not dropped: sent once quiet hours end (or the stale window has passed).
      elseif st.last_notified == nil then
        -- The ladder starts with the first notification people actually get.
        st.esc_base, st.level = now, 0
        send(a, st, now, channels_at(a, 0), cond, severity, describe(a, st, now))
      else
        local level = 0
        for k, step in ipairs(a.escalate) do
          if now - st.esc_base >= step.after then level = k end
        end
        local text = describe(a, st, now)
        if level > st.level then
          local extra = {}
          for k = st.level + 1, level do
            for _, c in ipairs(a.escalate[k].notify) do extra[#extra + 1] = c end
          end
          send(a, st, now, extra, "escalated", severity, text .. " (not acknowledged for " .. short(now - st.episode_start) .. ")")
          st.level = level
        elseif a.repeat_every and now - st.last_notified >= a.repeat_every then
          send(a, st, now, channels_at(a, st.level), "repeat", severity, text .. " (still, for " .. short(now - st.episode_start) .. ")")
        elseif st.acked_at and st.last_notified < st.acked_at + (a.ack_expires or 0) then
          send(a, st, now, channels_at(a, st.level), "repeat", severity, text .. " (acknowledgement expired)")
        end
      end
    end
  end
  if state ~= st.state then
    st.state = state
    st.since = now
  end
  save(a)
  return state
end

function alert_mt:status()
  local st = self.st or fresh_state()
  local p = st.points[#st.points]
  return {
    id = self.id, title = self.title, severity = self.severity, state = st.state == "new" and "unknown" or st.state,
    since = st.since, episode = st.episode, acked_by = st.acked_by, acked_at = st.acked_at,
    snoozed_until = st.snoozed_until, value = p and p.value, time = p and p.time, level = st.level,
    last_notified = st.last_notified, error = st.last_error, why = st.why,
  }
end

function M.check_all()
  local states = {}
  for _, id in ipairs(order) do
    local ok, state = pcall(alerts[id].check, alerts[id])
    if not ok then host.warn("alert " .. id .. ": check failed: " .. tostring(state)) state = "error" end
    states[id] = state
  end
  return states
end

function M.get(id) return alerts[id] end

function M.list()
  local out = {}
  for _, id in ipairs(order) do out[#out + 1] = alerts[id]:status() end
  return out
end

local function id_arg(id, fname)
  if type(id) ~= "string" then error("bad argument #1 to 'alert." .. fname .. "' (string expected, got " .. type(id) .. ")", 3) end
  return id
end

function M.ack(id, by)
  id_arg(id, "ack")
  if by ~= nil and type(by) ~= "string" then error("bad argument #2 to 'alert.ack' (string expected, got " .. type(by) .. ")", 2) end
  local ack, err = host.ack(id, by or host.script)
  if not ack then return nil, err end
  local a = alerts[id]
  if a and a.st and a.st.episode == ack.episode then
    a.st.acked_by, a.st.acked_at = ack.by, ack.at
    if a.st.state == "firing" or a.st.state == "stale" then a.st.state = "acked" a.st.since = ack.at end
  end
  return ack
end

function M.snooze(id, span)
  id_arg(id, "snooze")
  local ms = duration(span, "bad argument #2 to 'alert.snooze'")
  local a = alerts[id]
  if not a then error("alert.snooze: no alert '" .. id .. "' is defined in this script", 2) end
  load(a)
  local st = a.st
  local alerting = st.cond == "firing" or st.cond == "stale"
  if a.severity == "urgent" and not alerting then
    return nil, { code = "urgent", message = "an urgent alert can only be snoozed while it fires (a snooze never mutes its next episode)" }
  end
  local now = host.now()
  st.snoozed_until = now + ms
  -- An urgent alert's snooze ends with its episode.
  st.snooze_episode = a.severity == "urgent" and st.episode or nil
  if alerting then st.state, st.since = "snoozed", now end
  save(a)
  return { id = id, ["until"] = st.snoozed_until }
end

function M.unsnooze(id)
  id_arg(id, "unsnooze")
  local a = alerts[id]
  if not a then error("alert.unsnooze: no alert '" .. id .. "' is defined in this script", 2) end
  load(a)
  a.st.snoozed_until, a.st.snooze_episode = nil, nil
  save(a)
  return true
end

return M
