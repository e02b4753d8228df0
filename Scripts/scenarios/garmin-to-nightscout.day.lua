-- garmin-to-nightscout.lua over a day against the Garmin simulator: activities become Exercise
-- treatments, the night's sleep and yesterday's totals become notes, and nothing is sent twice
-- although the script looks every 30 minutes.
-- Run: lookout test Scripts/garmin-to-nightscout.lua --scenario Scripts/scenarios/garmin-to-nightscout.day.lua
return {
  name = "garmin-to-nightscout: a day",
  start = "2026-01-10T08:00:00Z", hours = 12,
  bg = { noise = 2, seed = 5, points = { {"0m", 110}, {"12h", 120} } },
  garmin = {},
  expect = {
    { effect = "nightscout.upload", match = "eventType=Exercise", within = "5m", of = "0m" },
    { effect = "nightscout.upload", match = "notes=Sleep", within = "5m", of = "0m" },
    { effect = "nightscout.upload", match = "notes=Garmin day", within = "5m", of = "0m" },
    { no_upload = "treatments", within = "11h", of = "35m" },
  },
}
