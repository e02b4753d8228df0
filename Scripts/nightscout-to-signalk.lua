--[[ nightscout-to-signalk.lua — BG on the boat's displays

Every minute this reads the newest CGM reading from a Nightscout site and publishes it to a
Signal K server, so chartplotters, dashboards (KIP, WilhelmSK, …) and other Signal K apps show
it next to depth and wind. Signal K has no medical paths; these are Lookout's own:

  crew.<who>.bloodGlucose          the newest reading, in mol/m³ (SI; the same number as mmol/L)
  crew.<who>.bloodGlucoseTrend     the trend arrow's name: "Flat", "FortyFiveDown", "DoubleUp" …
  crew.<who>.bloodGlucoseAge       seconds since the reading was taken
  notifications.crew.<who>.bloodGlucose
                                   a Signal K notification {state, method, message}:
                                   "alarm" below urgent_low, "warn" below low or when no reading
                                   is fresh (stale data is never shown as fine), "normal" otherwise;
                                   sent when the state changes, and again every `every` while not normal;
                                   its message shows BG as people read it, in the site's unit (`units`
                                   of [nightscout.home], default the site's own) with the other in
                                   parentheses and the trend arrow: "Low BG: 3.6 mmol/L (65 mg/dL) ↘"

Needs two profiles in ~/.config/lookout/config.toml:
  [nightscout.home]  url = "https://…", token_env = "NS_TOKEN"      (read access)
  [signalk.boat]     url = "http://boat.local:3000", token_env = "SK_TOKEN"
                     (with security on, a readwrite token: `lookout` can request one)
Settings (all optional), e.g.:
  [scripts."nightscout-to-signalk.lua".settings]
  who = "anna"        low = 70        urgent_low = 55        (mg/dL)
  site = "home"       boat = "boat"   stale_minutes = 15     every = "1m"
Run it: lookout run Scripts/nightscout-to-signalk.lua   (or keep it running: lookout serve Scripts/)
Try it: lookout test Scripts/nightscout-to-signalk.lua --scenario overnight-low
]]

local nightscout = require "nightscout"
local signalk = require "signalk"
local config = require "config"

local s = config.settings {
  site = "home", boat = "boat", who = "skipper",
  low = 70, urgent_low = 55, stale_minutes = 15, every = "1m",
}
assert(s.who:match("^[%w_]+$"), "settings.who: letters, digits and _ only (it becomes part of a Signal K path)")

local home = assert(nightscout.client(s.site))
local boat = assert(signalk.connect(s.boat))  -- open for as long as the script runs
local units, uerr = home:units()
if not units then log.warn("cannot read the site's glucose unit (showing mg/dL):", uerr.message) units = "mg/dL" end
local base = "crew." .. s.who .. ".bloodGlucose"
local last_state

--- What the notification says about a reading (or its absence).
local function judge(bg)
  if not bg then return "warn", "No BG reading from Nightscout" end
  if bg.age > s.stale_minutes * 60 then
    return "warn", ("No fresh BG: the newest is %d min old"):format(bg.age // 60)
  end
  local text = nightscout.format_bg(bg.sgv, { units = units, direction = bg.direction })
  if bg.sgv < s.urgent_low then return "alarm", "Urgent low BG: " .. text end
  if bg.sgv < s.low then return "warn", "Low BG: " .. text end
  return "normal", "BG " .. text
end

local function publish()
  local bg, err = home:latest()
  if not bg and err.code ~= "no_data" then
    log.warn("cannot read Nightscout:", err.message)
  end
  if bg then
    local ok, serr = boat:send_delta {
      values = {
        [base] = bg.mmol,
        [base .. "Trend"] = bg.direction or json.null,
        [base .. "Age"] = math.floor(bg.age),
      },
      source = "lookout.nightscout",
      timestamp = bg.date,
    }
    if not ok then log.warn("cannot publish to Signal K:", serr.message) end
  end
  local state, message = judge(bg)
  if state ~= last_state or state ~= "normal" then
    local ok = boat:send_delta {
      path = "notifications." .. base,
      value = { state = state, method = state == "normal" and setmetatable({}, json.array_mt) or { "visual", "sound" }, message = message },
      source = "lookout.nightscout",
    }
    if ok then
      if state ~= last_state then log.info("notification:", state, message) end
      last_state = state
    end
  end
end

publish()
timer.every(s.every, publish)
