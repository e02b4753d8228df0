-- Alerts you can sleep on: an urgent low that escalates, a sustained high, and "no data" —
-- each notified through channels from config.toml, acknowledged with `lookout ack ID`.
--
-- Try it against the local simulator, with a log channel (nothing leaves the machine):
--   lookout sim nightscout --fill 1 --scenario overnightLow --token me:admin     (prints URL and token)
--   config.toml:
--     [nightscout.home]
--     url = "http://127.0.0.1:PORT"
--     token_env = "NS_TOKEN"
--     [notify.phone]
--     type = "log"              # or ntfy/pushover/telegram/webhook; dry_run = true to only log
--     [notify.partner]
--     type = "log"
--   NS_TOKEN=me-… lookout run Examples/alerts.lua
--   lookout ack --list ; lookout ack urgent-low --by me
local alert = require "alert"
local nightscout = require "nightscout"
local home = assert(nightscout.client "home")
local units = home:units() or "mg/dL"

-- "Urgent low: 52 mg/dL (2.9 mmol/L)": the value with its unit, the other in parentheses.
local function message(title)
  return function(value) return title .. ": " .. nightscout.format_bg(value, { units = units }) end
end

-- The newest readings (oldest first) as {value, time}: enough for sustained and rate conditions.
local function glucose()
  local entries = home:entries { count = 15, type = "sgv" }
  if not entries then return nil end       -- network trouble: no new points (ends as "stale")
  local points = {}
  for i = #entries, 1, -1 do points[#points + 1] = { entries[i].sgv, entries[i].date } end
  return points
end

alert.define {
  id = "urgent-low", title = "Urgent low", severity = "urgent", series = glucose,
  when = alert.any { alert.below(55), alert.all { alert.below(70), alert.falling(2) } },
  clear = alert.above(80), stale = "15m",
  notify = { "phone" }, escalate = { { after = "10m", notify = { "partner" } } }, repeat_every = "5m",
  message = message("Urgent low"),
}

alert.define {
  id = "high", title = "High for an hour", severity = "warning", series = glucose,
  when = alert.sustained(alert.above(250), "1h"), clear = alert.below(200),
  notify = { "phone" }, quiet_hours = { from = "23:00", to = "07:00" },  -- held until morning
  message = message("High for an hour"),
}

local function check()
  for id, state in pairs(alert.check_all()) do log.info(id, state) end
end

check()
if arg[1] ~= "once" then timer.every("1m", check) end
