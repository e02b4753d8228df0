--[[ not-looping.lua — when the closed loop stops

Loop and AAPS write a devicestatus to Nightscout every five minutes while they run. When none
has come for `minutes` (20 by default), the phone may be flat, out of range of the pump or CGM,
or the app may have crashed — and insulin is no longer adjusted. This script notices and says
so, escalating while nobody reacts:

  not-looping  (warning)  no Loop/AAPS devicestatus for `minutes`; to `channel` at once, to
                          `escalate_to` after `escalate_after` without an acknowledgement,
                          repeated every `repeat_every`; "resolved" once the loop runs again.

Only statuses that come from a loop count (`loop` or `openaps` in the document): an uploader's
battery status does not hide a stopped loop. Acknowledge with `lookout ack not-looping`.

Needs: [nightscout.home] (read access) and the channels ([notify.NAME]).
Settings, e.g. [scripts."not-looping.lua".settings]
  minutes = 20   channel = "phone"   escalate_to = "partner"   escalate_after = "30m"
  repeat_every = "15m"   site = "home"
Try it: lookout test Scripts/not-looping.lua --scenario not-looping
]]

local alert = require "alert"
local nightscout = require "nightscout"
local config = require "config"

local s = config.settings {
  site = "home", minutes = 20, channel = "phone", escalate_to = "partner", escalate_after = "30m",
  repeat_every = "15m",
}
local home = assert(nightscout.client(s.site))

--- The time of the newest devicestatus a loop wrote (1 and that time), or nothing.
local function last_loop()
  local statuses, err = home:devicestatus { last = "6h", count = 20 }
  if not statuses then
    log.warn("cannot read Nightscout:", err.message)
    return nil
  end
  for _, d in ipairs(statuses) do
    if (d.loop or d.openaps) and d.date then return 1, d.date end
  end
  return nil
end

alert.define {
  id = "not-looping", title = "Not looping", severity = "warning", series = last_loop,
  when = alert.when(function() return false end),  -- only the absence of statuses alerts
  stale = s.minutes * 60, resolved = true,
  notify = { s.channel }, escalate = { { after = s.escalate_after, notify = { s.escalate_to } } },
  repeat_every = s.repeat_every,
  message = ("Loop has not reported for %d minutes: check the phone, pump and CGM"):format(s.minutes),
}

local function check() alert.check_all() end
check()
timer.every("1m", check)
