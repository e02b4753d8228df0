-- low-alert.lua through a 45-minute sensor gap at a normal BG: "No CGM data" within 25 minutes,
-- no glucose alert at all (missing data is never read as low, high or fine).
-- Run: lookout test Scripts/low-alert.lua --scenario Scripts/scenarios/low-alert.sensor-gap.lua
return {
  name = "low-alert: sensor gap",
  start = "2026-01-10T22:00:00Z", hours = 8,
  bg = { noise = 2, seed = 13, points = { {"0m", 132}, {"3h", 121}, {"5h", 104}, {"8h", 126} } },
  missed = { { from = "3h", to = "3h45m" }, { from = "6h10m", to = "6h15m" } },
  expect = {
    { notify = "stale", within = "25m", of = "3h" },
    { no_notify = "stale", within = "2h50m", of = "0m" },
    { no_notify = "urgent-low" }, { no_notify = "low" }, { no_notify = "high" },
  },
}
