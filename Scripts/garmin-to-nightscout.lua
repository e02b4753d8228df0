--[[ garmin-to-nightscout.lua — the watch's day next to the glucose

Copies from Garmin Connect into Nightscout, as treatments Nightscout already knows how to show:

  • each new activity as an "Exercise" treatment at its start, with its duration and a note
    ("Running: 9.4 km in 54 min, avg HR 141, 507 kcal") — exercise is what moves glucose most;
  • each night's sleep as a "Note" at bedtime with the sleep's duration
    ("Sleep 7 h 26 min: deep 1 h 41 min, REM 1 h 23 min, score 62, resting HR 55");
  • yesterday's totals as one "Note" at the end of the day ("Garmin day: 15,570 steps,
    resting HR 55, stress 38 average").

Every `every` (30 minutes by default) it looks at the last `activities` activities, last night's
sleep and yesterday's summary. Nothing is written twice: what was sent is remembered in the
script's store, and the outbox gives each treatment a stable identifier (device, time and
event type), so a document that reached Nightscout before a crash is recognised, not repeated.

Needs: [garmin.me] (log in once with `lookout garmin login me`; tokens are refreshed by
themselves) and [nightscout.home] with a token that may create treatments.
Settings, e.g. [scripts."garmin-to-nightscout.lua".settings]
  garmin = "me"   site = "home"   every = "30m"   activities = 20
]]

local garmin = require "garmin"
local nightscout = require "nightscout"
local config = require "config"
local store = require "store"

local s = config.settings { garmin = "me", site = "home", every = "30m", activities = 20 }
local me = assert(garmin.client(s.garmin))
local home = assert(nightscout.client(s.site))

--- Epoch ms of a UTC "YYYY-MM-DD HH:MM:SS" (Garmin's *GMT fields), whatever the local zone.
local function utc_ms(text)
  local y, m, d, H, M, S = text:match("^(%d+)%-(%d+)%-(%d+)[ T](%d+):(%d+):(%d+)")
  if not y then return nil end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  if m <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400
  local doy = (153 * (m + (m > 2 and -3 or 9)) + 2) // 5 + d - 1
  local days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
  return ((days * 24 + tonumber(H)) * 60 + tonumber(M)) * 60000 + tonumber(S) * 1000
end

local function hm(seconds)
  seconds = math.floor(seconds or 0)
  return ("%d h %d min"):format(seconds // 3600, seconds % 3600 // 60)
end

--- Uploads once per key; a document the outbox keeps for later counts as sent.
local function upload_once(key, doc)
  if store.get(key) then return false end
  doc.enteredBy = "lookout garmin-to-nightscout"
  local ok, err = home:upload_treatment(doc)
  if ok or (err.outbox_id and err.retryable) then
    store.set(key, true)
    log.info(ok and "sent:" or "queued:", doc.eventType, doc.notes)
    return true
  end
  log.warn("cannot send " .. key .. ":", err.message)
  return false
end

local function activities()
  local list, err = me:activities { limit = s.activities }
  if not list then return log.warn("Garmin activities:", err.message) end
  for i = #list, 1, -1 do
    local a = list[i]
    local start = a.startTimeGMT and utc_ms(a.startTimeGMT)
    if a.activityId and start then
      local kind = (a.activityType and a.activityType.typeKey or "activity"):gsub("_", " ")
      local parts = { ("%s%s"):format(kind:sub(1, 1):upper(), kind:sub(2)) .. ":" }
      local minutes = math.floor((a.duration or 0) / 60 + 0.5)
      if (a.distance or 0) > 0 then
        parts[#parts + 1] = ("%.1f km in %d min"):format(a.distance / 1000, minutes)
      else
        parts[#parts + 1] = ("%d min"):format(minutes)
      end
      if a.averageHR then parts[#parts + 1] = (", avg HR %d"):format(a.averageHR) end
      if a.calories then parts[#parts + 1] = (", %d kcal"):format(a.calories) end
      upload_once("activity:" .. a.activityId, {
        eventType = "Exercise", date = start, duration = math.floor((a.duration or 0) / 60 + 0.5),
        notes = table.concat(parts, " "):gsub(" ,", ","),
      })
    end
  end
end

local function sleep_last_night()
  local today = os.date("!%Y-%m-%d")
  local night, err = me:sleep(today)
  if not night then return err and log.warn("Garmin sleep:", err.message) end
  local d = night.dailySleepDTO
  if not d or not d.sleepStartTimestampGMT or (d.sleepTimeSeconds or 0) <= 0 then return end
  local score = d.sleepScores and d.sleepScores.overall and d.sleepScores.overall.value
  local text = ("Sleep %s: deep %s, REM %s"):format(hm(d.sleepTimeSeconds), hm(d.deepSleepSeconds), hm(d.remSleepSeconds))
  if score then text = text .. (", score %d"):format(score) end
  if night.restingHeartRate then text = text .. (", resting HR %d"):format(night.restingHeartRate) end
  upload_once("sleep:" .. (d.calendarDate or today), {
    eventType = "Note", date = d.sleepStartTimestampGMT, duration = d.sleepTimeSeconds // 60, notes = text,
  })
end

local function yesterday()
  local day = os.date("!%Y-%m-%d", os.time() - 86400)
  if store.get("day:" .. day) then return end
  local sum, err = me:daily_summary(day)
  if not sum then return log.warn("Garmin daily summary:", err.message) end
  if not sum.totalSteps then return end
  local steps = tostring(math.floor(sum.totalSteps)):reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
  local text = ("Garmin day: %s steps"):format(steps)
  if sum.restingHeartRate then text = text .. (", resting HR %d"):format(sum.restingHeartRate) end
  if sum.averageStressLevel and sum.averageStressLevel >= 0 then
    text = text .. (", stress %d average"):format(sum.averageStressLevel)
  end
  upload_once("day:" .. day, { eventType = "Note", date = utc_ms(day .. " 23:59:00"), notes = text })
end

local function sync()
  activities()
  sleep_last_night()
  yesterday()
end

sync()
timer.every(s.every, sync)
