-- low-alert.lua through an overnight low nobody acknowledges: nothing before the fall, the
-- urgent low within 15 minutes of BG < 55, the partner after 10 minutes without an
-- acknowledgement, "resolved" after the recovery, and no high or stale alert.
-- Run: lookout test Scripts/low-alert.lua --scenario Scripts/scenarios/low-alert.overnight-low.lua
return {
  name = "low-alert: overnight low, not acknowledged",
  start = "2026-01-10T22:00:00Z", hours = 8,
  bg = { noise = 2, seed = 11, points = {
    {"0m", 145}, {"1h", 132}, {"2h", 112}, {"3h", 86}, {"3h45m", 62}, {"4h15m", 52},
    {"4h45m", 50}, {"5h15m", 66}, {"6h", 95}, {"8h", 112} } },
  expect = {
    { no_notify = "phone", within = "3h", of = "0m" },                          -- no false alert first
    { notify = "urgent-low", severity = "urgent", within = "15m", of = "bg < 55" },
    { notify = "partner", within = "25m", of = "bg < 55" },                     -- escalation
    { notify = "resolved", severity = "info", within = "1h", of = "4h45m" },
    { no_notify = "high" }, { no_notify = "stale" },
  },
}
