-- low-alert.lua through an urgent low that recovers slowly, lingering between 55 and 65 mg/dL:
-- the urgent low pages while BG is below 55; on the way back up its repeats say "recovering"
-- (never "Urgent low: 62 mg/dL … (still, for 1 h 10 min)"); it resolves once BG is above 65 (its
-- stated hysteresis), and "Low" sends its "resolved" too, as every glucose alert does.
-- Run: lookout test Scripts/low-alert.lua --scenario Scripts/scenarios/low-alert.slow-recovery.lua
return {
  name = "low-alert: slow recovery from an urgent low",
  start = "2026-01-10T22:00:00Z", hours = 7,
  bg = { noise = 0.5, seed = 21, points = {
    {"0m", 120}, {"1h", 95}, {"1h30m", 60}, {"1h45m", 50}, {"2h15m", 48}, {"2h45m", 57},
    {"3h30m", 63}, {"4h", 68}, {"4h30m", 75}, {"5h", 85}, {"7h", 110} } },
  expect = {
    { notify = "urgent-low", severity = "urgent", within = "15m", of = "bg < 55" },
    { notify = "Urgent low: 4", severity = "urgent" },                 -- "Urgent low: 48 mg/dL (2.7 mmol/L) →"
    { notify = "mg/dL (", severity = "urgent" },                       -- the unit, the other unit in parentheses
    { notify = "Urgent low, recovering: 5", severity = "urgent", of = "2h45m", within = "45m" },
    { no_notify = "Urgent low: 6" }, { no_notify = "Urgent low: 7" }, -- never "urgent low" on the way up
    { notify = "Urgent low: resolved", severity = "info", of = "3h30m", within = "30m" },
    { notify = "Low: resolved", severity = "info", of = "4h30m", within = "40m" },
    { no_notify = "high" }, { no_notify = "stale" },
  },
}
