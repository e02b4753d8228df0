-- Watch a Nightscout site and warn about lows, the way a caregiver's script would.
--
-- Try it without an account against the local simulator:
--   lookout sim nightscout --fill 1 --scenario overnightLow --token me:admin     (prints URL and token)
--   config.toml:  [nightscout.home]  url = "http://127.0.0.1:PORT"  token_env = "NS_TOKEN"
--   NS_TOKEN=me-… lookout run Examples/nightscout-low-alert.lua
local nightscout = require "nightscout"

local home = assert(nightscout.client "home")
local LOW, STALE = 70, 15 * 60        -- mg/dL; seconds after which a reading is too old to trust
local units = home:units() or "mg/dL" -- the unit people of this site read ("mmol" or "mg/dL")

-- "62 mg/dL (3.4 mmol/L) ↗": glucose as people read it, in their unit, with the arrow.
local function show(sgv, direction)
  return nightscout.format_bg(sgv, { units = units, direction = direction })
end

local function check()
  local bg, err = home:latest()
  if not bg then
    log.warn("no reading:", err)      -- network trouble or no data: say so, never guess
    return
  end
  if bg.age > STALE then
    log.warn(("last reading is %d min old: the sensor or uploader may be down"):format(bg.age // 60))
  elseif bg.sgv < LOW then
    log.warn(("LOW %s, delta %s"):format(show(bg.sgv, bg.direction), bg.delta or "?"))
  else
    log.info(show(bg.sgv, bg.direction))
  end
end

-- What happened overnight: the lowest reading of the last 8 hours.
local night = assert(home:entries { last = "8h", type = "sgv", count = 200 })
local lowest
for _, e in ipairs(night) do
  if not lowest or e.sgv < lowest.sgv then lowest = e end
end
if lowest then print(("lowest in 8 h: %s at %s"):format(show(lowest.sgv), lowest.dateString)) end

check()
if arg[1] ~= "once" then
  timer.every("5m", check)          -- keep watching; Ctrl-C stops it
end
