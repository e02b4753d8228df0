-- nightscout-to-signalk.lua through an overnight low: BG reaches the boat every minute, the
-- Signal K notification turns to "alarm" soon after BG falls below 55 mg/dL and back to
-- "normal" after the recovery.
-- Run: lookout test Scripts/nightscout-to-signalk.lua --scenario Scripts/scenarios/nightscout-to-signalk.overnight-low.lua
return {
  name = "nightscout-to-signalk: overnight low",
  start = "2026-01-10T22:00:00Z", hours = 8,
  bg = { noise = 2, seed = 11, points = {
    {"0m", 145}, {"1h", 132}, {"2h", 112}, {"3h", 86}, {"3h45m", 62}, {"4h15m", 52},
    {"4h45m", 50}, {"5h15m", 66}, {"6h", 95}, {"8h", 112} } },
  boat = { anchor = { lat = 59.85, lon = 10.64 }, radius = 40, points = { {"0m", 10} }, wind = { {"0m", 5} }, depth = 6 },
  expect = {
    { signalk = "crew.skipper.bloodGlucose", within = "2m", of = "0m" },
    { effect = "signalk.delta", match = [["state":"alarm"]], within = "10m", of = "bg < 55" },
    { effect = "signalk.delta", match = [["state":"normal"]], within = "1h", of = "4h45m" },
    { no_effect = "signalk.delta", match = [["state":"alarm"]], within = "3h", of = "0m" },
  },
}
