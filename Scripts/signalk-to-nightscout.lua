--[[ signalk-to-nightscout.lua — the boat's day in the diabetes record

Life on board changes glucose: hours of heavy weather, a long helming watch, motoring against a
sea. This script watches the boat's Signal K data and writes short Nightscout notes (treatments
with eventType "Note", entered by "lookout") when something that matters for glucose starts or
ends, so the BG chart later shows why a night went the way it did:

  • heavy weather: true wind (apparent when there is no true wind) averaging at least
    `heavy_wind_knots`, or the boat heeling at least `heavy_heel_degrees`, over a window;
    a note when it starts and one when it ends, with its duration;
  • the engine: a note when it starts and when it stops (from propulsion.*.revolutions);
  • optionally a summary every `summary_every` (e.g. "6h"): speed, distance, wind and position.

Windows are `every` long (15 minutes by default). Notes go through Lookout's outbox, so none is
lost while the boat is offline: they are uploaded when the connection returns. What was noted
last is kept in the script's store, so a restart does not repeat a note.

Needs: [signalk.boat] (read access) and [nightscout.home] (a token that may create treatments).
Settings, e.g. [scripts."signalk-to-nightscout.lua".settings]
  every = "15m"   heavy_wind_knots = 20   heavy_heel_degrees = 20   summary_every = "6h"
  site = "home"   boat = "boat"
Run: lookout run Scripts/signalk-to-nightscout.lua   (or lookout serve Scripts/)
]]

local nightscout = require "nightscout"
local signalk = require "signalk"
local config = require "config"
local store = require "store"

local s = config.settings {
  site = "home", boat = "boat", every = "15m",
  heavy_wind_knots = 20, heavy_heel_degrees = 20, summary_every = "",
}

local home = assert(nightscout.client(s.site))
local boat = assert(signalk.connect(s.boat))  -- open for as long as the script runs
local units = signalk.units

-- What the current window has seen.
local window
local function reset()
  window = { wind_true = {}, wind_apparent = {}, heel = nil, sog = {}, rpm = 0, position = nil }
end
reset()

boat:on("environment.wind.speedTrue", function(d) table.insert(window.wind_true, d.value) end)
boat:on("environment.wind.speedApparent", function(d) table.insert(window.wind_apparent, d.value) end)
boat:on("navigation.speedOverGround", function(d) table.insert(window.sog, d.value) end)
boat:on("navigation.position", function(d) window.position = d.value end)
boat:on("navigation.attitude", function(d)
  if type(d.value) == "table" and d.value.roll then
    window.heel = math.max(window.heel or 0, math.abs(units.rad_to_deg(d.value.roll)))
  end
end)
boat:on("propulsion.*.revolutions", function(d)
  if type(d.value) == "number" then window.rpm = math.max(window.rpm, d.value * 60) end
end)

local function average(list)
  if #list == 0 then return nil end
  local sum = 0
  for _, v in ipairs(list) do sum = sum + v end
  return sum / #list
end

local function where(p)
  if not p or not p.latitude then return "" end
  return (" at %.3f°%s %.3f°%s"):format(math.abs(p.latitude), p.latitude >= 0 and "N" or "S",
                                         math.abs(p.longitude), p.longitude >= 0 and "E" or "W")
end

local function hours(seconds)
  local m = seconds // 60
  return m >= 60 and ("%d h %d min"):format(m // 60, m % 60) or ("%d min"):format(m)
end

local function note(text)
  local ok, err = home:upload_treatment {
    eventType = "Note", notes = text, enteredBy = "lookout signalk-to-nightscout", date = os.time() * 1000,
  }
  if ok then log.info("noted:", text)
  elseif err.outbox_id and err.retryable ~= false then log.info("queued (offline):", text)
  else log.warn("cannot write the note:", err.message) end
end

local function close_window()
  local w = window
  reset()
  local state = store.get("state", {})
  local now = os.time()
  local wind = average(w.wind_true) or average(w.wind_apparent)
  local wind_kn = wind and units.ms_to_knots(wind)
  local heavy = (wind_kn and wind_kn >= s.heavy_wind_knots) or (w.heel or 0) >= s.heavy_heel_degrees
  local weather = "wind " .. (wind_kn and ("%.0f kn"):format(wind_kn) or "unknown")
    .. (w.heel and (", heel up to %d°"):format(math.floor(w.heel)) or "")

  if heavy and not state.heavy_since then
    note("Heavy weather on board: " .. weather .. where(w.position))
    state.heavy_since = now
  elseif not heavy and state.heavy_since and wind_kn then
    note(("Heavy weather over after %s: %s"):format(hours(now - state.heavy_since), weather))
    state.heavy_since = nil
  end

  local running = w.rpm > 0
  if running and not state.engine_since then
    note(("Engine on (%.0f rpm)%s"):format(w.rpm, where(w.position)))
    state.engine_since = now
  elseif not running and state.engine_since then
    note("Engine off after " .. hours(now - state.engine_since))
    state.engine_since = nil
  end

  if s.summary_every ~= "" then
    local period = ({ s = 1, m = 60, h = 3600 })[s.summary_every:sub(-1)] * tonumber(s.summary_every:sub(1, -2))
    if now - (state.summary_at or 0) >= period then
      local sog = average(w.sog)
      note(("Under way: %s, %s%s"):format(sog and ("%.1f kn"):format(units.ms_to_knots(sog)) or "speed unknown",
                                         weather, where(w.position)))
      state.summary_at = now
    end
  end
  store.set("state", state)
end

timer.every(s.every, close_window)
log.info(("watching %s, a window every %s"):format(s.boat, s.every))
