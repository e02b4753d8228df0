-- not-looping.lua when Loop stops reporting at midnight while CGM readings continue: nothing
-- while it runs, the alert within 25 minutes of the last status, the partner after 30 more
-- minutes without an acknowledgement.
-- Run: lookout test Scripts/not-looping.lua --scenario Scripts/scenarios/not-looping.stops-at-midnight.lua
return {
  name = "not-looping: stops at midnight",
  start = "2026-01-10T22:00:00Z", hours = 6,
  bg = { noise = 2, seed = 15, points = { {"0m", 128}, {"2h", 140}, {"4h", 171}, {"6h", 150} } },
  loop = { every = "5m", stop = "2h" },
  expect = {
    { no_notify = "not-looping", within = "2h", of = "0m" },
    { notify = "not-looping", within = "25m", of = "2h" },
    { notify = "partner", within = "1h", of = "2h" },
  },
}
