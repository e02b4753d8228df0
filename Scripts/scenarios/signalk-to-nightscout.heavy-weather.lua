-- signalk-to-nightscout.lua through a blow: the wind rises from 10 to 27 knots at about 02:00
-- and drops again after 05:00. Expect one "Heavy weather" note when it starts, one when it is
-- over, and nothing in between (notes are written on changes, not every window).
-- Run: lookout test Scripts/signalk-to-nightscout.lua --scenario Scripts/scenarios/signalk-to-nightscout.heavy-weather.lua
return {
  name = "signalk-to-nightscout: heavy weather",
  start = "2026-01-10T22:00:00Z", hours = 8,
  bg = { noise = 2, seed = 3, points = { {"0m", 120}, {"8h", 120} } },
  boat = { anchor = { lat = 59.85, lon = 10.64 }, radius = 200, every = "1m", points = { {"0m", 10} },
           wind = { {"0m", 5}, {"1h50m", 5}, {"2h10m", 14}, {"5h", 14}, {"5h20m", 4}, {"8h", 4} }, depth = 8 },
  expect = {
    { no_upload = "treatments", within = "1h45m", of = "0m" },
    { effect = "nightscout.upload", match = "Heavy weather on board", within = "45m", of = "2h" },
    { effect = "nightscout.upload", match = "Heavy weather over", within = "45m", of = "5h10m" },
  },
}
