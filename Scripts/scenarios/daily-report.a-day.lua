-- daily-report.lua kept running for a day: one report (to the `phone` channel) within 24 hours,
-- with the day's time in range in its title, and no other notification.
-- Run: lookout test Scripts/daily-report.lua --scenario Scripts/scenarios/daily-report.a-day.lua
return {
  name = "daily-report: a day",
  start = "2026-01-10T22:00:00Z", hours = 26,
  bg = { noise = 3, seed = 21, points = {
    {"0m", 140}, {"3h", 95}, {"5h", 62}, {"6h", 110}, {"10h", 190}, {"12h", 150}, {"18h", 260},
    {"20h", 130}, {"26h", 120} } },
  settings = { notify = "phone" },
  expect = {
    { notify = "Daily report", within = "24h", of = "1h" },
    { notify = "% in range" },
  },
}
