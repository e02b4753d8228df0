--[[ low-alert.lua — glucose alerts you can sleep on

Five alerts over a Nightscout site's CGM readings, checked every minute:

  urgent-low    (urgent)  below `urgent_low` (55 mg/dL): the one that wakes people. It escalates
                          to `escalate_to` after `escalate_after` without an acknowledgement and
                          repeats every `repeat_every`; quiet hours never mute it. Hysteresis:
                          it resolves once BG is back above `urgent_low` + `recovered` (55 + 10 =
                          65 mg/dL); between the two a repeat says "recovering" with the arrow
                          (it never pages "Urgent low" for a value on its way back up).
  low           (warning) below `low` (70) for `low_minutes` (20) in a row (a short compression
                          artefact does not last that long); resolves above `low` + `recovered`.
  falling-fast  (warning) falling faster than `falling_rate` (3) mg/dL per minute over 15 minutes
                          while below `falling_below` (120).
  high          (warning) above `high` (250) for `high_minutes` (20) in a row; held during quiet
                          hours when they are set.
  stale         (warning) no reading newer than `stale_minutes` (15): the sensor, phone or
                          uploader has stopped. Missing data is never read as "fine" — the other
                          alerts say "stale" too, and none fires on old data.

Glucose alerts (urgent-low, low, high) all send "resolved" when they clear. Values are shown in the
site's unit (`units` of [nightscout.home], default the site's own), the other unit in parentheses,
with the trend arrow: "Urgent low: 52 mg/dL (2.9 mmol/L) ↓".

Notifications go to the channels named in the settings (`[notify.NAME]` in config.toml: ntfy,
Pushover, Telegram, a webhook, Nightscout announcements, a Signal K notification or the log).
Acknowledge from any terminal with `lookout ack urgent-low` (or the REPL: `alert.ack "urgent-low"`).

Needs: [nightscout.home] (read access) and the channels, e.g.
  [notify.phone]    type = "ntfy"   url = "https://ntfy.sh"   topic = "…"
  [notify.partner]  type = "pushover"   token_env = "…"   user_key_env = "…"
Settings (all optional), e.g. [scripts."low-alert.lua".settings]
  urgent_low = 55   low = 70   recovered = 10   low_minutes = 20   falling_rate = 3   falling_below = 120
  high = 250   high_minutes = 20
  stale_minutes = 15   channel = "phone"   escalate_to = "partner"   escalate_after = "10m"
  repeat_every = "5m"   quiet_from = "23:00"   quiet_to = "07:00"   site = "home"   check_every = "1m"
Try it: lookout test Scripts/low-alert.lua --scenario overnight-low   (also sensor-gap, post-meal-rise,
compression-low; Scripts/scenarios/low-alert.*.lua are its tests)
]]

local alert = require "alert"
local nightscout = require "nightscout"
local config = require "config"

local s = config.settings {
  site = "home", urgent_low = 55, low = 70, recovered = 10, low_minutes = 20, falling_rate = 3, falling_below = 120, high = 250,
  high_minutes = 20, stale_minutes = 15, channel = "phone", escalate_to = "partner",
  escalate_after = "10m", repeat_every = "5m", quiet_from = "", quiet_to = "", check_every = "1m",
}
local home = assert(nightscout.client(s.site))
local units, uerr = home:units()
if not units then log.warn("cannot read the site's glucose unit (showing mg/dL):", uerr.message) units = "mg/dL" end
local stale = s.stale_minutes * 60
local quiet = s.quiet_from ~= "" and { from = s.quiet_from, to = s.quiet_to } or nil

-- The last hour of readings, oldest first, as {value, time, direction}; nil when the site cannot be read
-- (then no new points arrive and the alerts turn "stale" after `stale_minutes`).
local cache = { at = nil, points = nil }
local function readings()
  local now = os.time()
  if cache.at ~= now then
    local entries, err = home:entries { last = "1h", type = "sgv", count = 30 }
    if not entries then log.warn("cannot read Nightscout:", err.message) end
    local points
    if entries then
      points = {}
      for i = #entries, 1, -1 do points[#points + 1] = { entries[i].sgv, entries[i].date, entries[i].direction } end
    end
    cache.at, cache.points = now, points
  end
  return cache.points
end

-- The trend arrow's name of the reading at `time` (nil when it is not the newest we read).
local function direction_at(time)
  local points = cache.points
  local p = points and points[#points]
  if p and p[2] == time then return p[3] end
end

-- "Title: 52 mg/dL (2.9 mmol/L) ↓"; with `threshold`, a value at or above it while the alert
-- still fires is on its way back: "Title, recovering: 61 mg/dL (3.4 mmol/L) ↗".
local function message(title, threshold)
  return function(value, time)
    if type(value) ~= "number" then return title end
    local text = nightscout.format_bg(value, { units = units, direction = direction_at(time) })
    if threshold and value >= threshold then return title .. ", recovering: " .. text end
    return title .. ": " .. text
  end
end

alert.define {
  id = "urgent-low", title = "Urgent low", severity = "urgent", series = readings,
  when = alert.below(s.urgent_low), clear = alert.above(s.urgent_low + s.recovered), stale = stale, stale_notify = false,
  notify = { s.channel }, escalate = { { after = s.escalate_after, notify = { s.escalate_to } } },
  repeat_every = s.repeat_every, resolved = true, message = message("Urgent low", s.urgent_low),
}

alert.define {
  id = "low", title = "Low", severity = "warning", series = readings,
  when = alert.sustained(alert.below(s.low), s.low_minutes * 60), clear = alert.above(s.low + s.recovered),
  stale = stale, stale_notify = false, notify = { s.channel }, repeat_every = "30m", resolved = true,
  message = message("Low", s.low),
}

alert.define {
  id = "falling-fast", title = "Falling fast", severity = "warning", series = readings,
  when = alert.all { alert.falling(s.falling_rate, "15m"), alert.below(s.falling_below) },
  stale = stale, stale_notify = false, notify = { s.channel }, message = message("Falling fast"),
}

alert.define {
  id = "high", title = "High", severity = "warning", series = readings,
  when = alert.sustained(alert.above(s.high), s.high_minutes * 60), clear = alert.below(s.high - 50),
  stale = stale, stale_notify = false, notify = { s.channel }, repeat_every = "1h", quiet_hours = quiet,
  resolved = true, message = message("High"),
}

-- "No data" as an alert of its own: its condition never fires, so only staleness notifies
-- (the others stay quiet about gaps, except an urgent low whose readings stop).
alert.define {
  id = "stale", title = "No CGM data", severity = "warning", series = readings,
  when = alert.when(function() return false end), stale = stale,
  notify = { s.channel }, escalate = { { after = "30m", notify = { s.escalate_to } } }, repeat_every = "30m",
  message = ("No CGM reading for %d minutes"):format(s.stale_minutes),
}

local last = {}
local function check()
  for id, state in pairs(alert.check_all()) do
    if state ~= (last[id] or "ok") and state ~= "unknown" then log.info(id .. ":", last[id] or "ok", "→", state) end
    last[id] = state
  end
end

check()
timer.every(s.check_every, check)
