--[[ daily-report.lua — the last day in numbers and a chart

Time in range and the other figures of an ambulatory glucose profile summary for the last 24
hours, with a terminal chart and an SVG chart saved in Lookout's reports folder:

  readings and sensor coverage (share of the 288 five-minute readings a day has),
  mean, standard deviation, coefficient of variation, GMI (estimated A1c),
  time below 54 and 70, in range (70–180), above 180 and 250 mg/dL (the consensus ranges),
  insulin and carbohydrates entered as treatments.

`lookout run Scripts/daily-report.lua now` prints the report once. Kept running
(`lookout serve Scripts/`), it reports every day at `at` (local time) and, when `notify` names a
channel, sends the summary there.

Needs: [nightscout.home] (read access). Settings, e.g. [scripts."daily-report.lua".settings]
  site = "home"   at = "07:00"   mmol = false   notify = ""   (a notify channel name)
]]

local nightscout = require "nightscout"
local config = require "config"
local chart = require "chart"

local s = config.settings { site = "home", at = "07:00", mmol = false, notify = "" }
local home = assert(nightscout.client(s.site))

local function pct(n, total) return total > 0 and 100 * n / total or 0 end

--- The figures for the readings of one day (mg/dL values).
local function figures(values)
  local n, sum = #values, 0
  for _, v in ipairs(values) do sum = sum + v end
  local mean = sum / n
  local sq = 0
  for _, v in ipairs(values) do sq = sq + (v - mean) ^ 2 end
  local sd = n > 1 and math.sqrt(sq / (n - 1)) or 0
  local count = { vlow = 0, low = 0, range = 0, high = 0, vhigh = 0 }
  for _, v in ipairs(values) do
    if v < 54 then count.vlow = count.vlow + 1 end
    if v < 70 then count.low = count.low + 1
    elseif v <= 180 then count.range = count.range + 1
    else count.high = count.high + 1 end
    if v > 250 then count.vhigh = count.vhigh + 1 end
  end
  return {
    n = n, mean = mean, sd = sd, cv = 100 * sd / mean, gmi = 3.31 + 0.02392 * mean,
    coverage = math.min(100, pct(n, 288)),
    below54 = pct(count.vlow, n), below70 = pct(count.low, n), in_range = pct(count.range, n),
    above180 = pct(count.high, n), above250 = pct(count.vhigh, n),
  }
end

local function report()
  local entries, err = home:entries { last = "24h", type = "sgv", count = 2000 }
  if not entries then
    log.error("cannot read entries:", err.message)
    return nil, err
  end
  local values = {}
  for _, e in ipairs(entries) do values[#values + 1] = e.sgv end
  if #values == 0 then
    log.warn("no readings in the last 24 hours: no report")
    return nil
  end
  local f = figures(values)
  local unit = s.mmol and "mmol/L" or "mg/dL"
  local function bg(v) return s.mmol and ("%.1f"):format(nightscout.to_mmol(v)) or ("%.0f"):format(v) end

  local insulin, carbs = 0, 0
  for _, t in ipairs(home:treatments { last = "24h", count = 1000 } or {}) do
    insulin = insulin + (tonumber(t.insulin) or 0)
    carbs = carbs + (tonumber(t.carbs) or 0)
  end

  local lines = {
    ("Last 24 h: %d readings (%.0f%% coverage)"):format(f.n, f.coverage),
    ("Mean %s %s, SD %s, CV %.0f%%, GMI %.1f%%"):format(bg(f.mean), unit, bg(f.sd), f.cv, f.gmi),
    ("In range %.0f%% · below 70: %.0f%% (below 54: %.0f%%) · above 180: %.0f%% (above 250: %.0f%%)")
      :format(f.in_range, f.below70, f.below54, f.above180, f.above250),
    ("Insulin %.1f U · carbs %.0f g"):format(insulin, carbs),
  }
  local text = table.concat(lines, "\n")
  local low, high = s.mmol and 3.9 or 70, s.mmol and 10 or 180
  print(chart.plot(entries, { low = low, high = high, mmol = s.mmol, title = "BG, last 24 h", unit = unit }))
  print(text)
  local svg = chart.svg(entries, { low = low, high = high, mmol = s.mmol, title = "BG, last 24 h (" .. unit .. ")" })
  local path, serr = chart.save(svg, os.date("daily-%Y-%m-%d.svg"))
  if path then print("chart: " .. path) else log.warn("cannot save the chart:", serr.message) end
  if s.notify ~= "" then
    local notify = require "notify"
    notify.send(s.notify, { title = ("Daily report: %.0f%% in range"):format(f.in_range), message = text, severity = "info" })
  end
  return f
end

if arg[1] == "now" then
  report()
else
  require("schedule").at(s.at, report, { name = "daily-report" })
  log.info("reporting every day at " .. s.at)
end
