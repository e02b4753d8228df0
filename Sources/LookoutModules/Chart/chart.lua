---@meta chart
--- Charts of a series — BG entries, Signal K values, any `{time, value}` list — for the terminal
--- (braille characters, the REPL's answer to a glucose chart view) and as SVG files.
---
--- A series is a list of numbers, of `{time_ms, value}` pairs, or of tables with a time
--- (`date`, `time`, `t` or `mills`, epoch milliseconds) and a value (`sgv`, `mbg`, `value` or
--- `v`): Nightscout entries can be passed as they come. Entries without a value are skipped;
--- points are drawn in time order and the line is broken where readings are missing (a gap of
--- more than three typical steps), so a sensor gap shows as a gap.
---@class chartlib
local chart = {}

---@class chart.options
---@field low? number lower edge of the target range (shaded; points below are red in colour)
---@field high? number upper edge of the target range (points above are yellow in colour)
---@field min? number fixed bottom of the value axis (default: data and range, padded)
---@field max? number fixed top of the value axis
---@field title? string a title line
---@field unit? string unit label, e.g. "mg/dL"
---@field mmol? boolean convert mg/dL values to mmol/L (give `low`/`high` in mmol/L then)
---@field tz? string time zone of the time labels, e.g. "Europe/Oslo" (default: the computer's)
---@field width? integer terminal columns (default 60) or SVG pixels (default 800)
---@field height? integer terminal rows (default 12) or SVG pixels (default 300)
---@field color? boolean `plot` only: ANSI colours, a green target band (default false)

--- The series as a terminal plot: value axis on the left, the target range marked (dotted
--- edges, or a green band with `color = true`), start and end times below.
--- Context: anywhere.
--- ```lua
--- local home = require("nightscout").client "home"
--- print(chart.plot(home:entries { count = 36 }, { low = 70, high = 180, title = "BG, last 3 h" }))
--- ```
---@param series table
---@param opts? chart.options
---@return string text
function chart.plot(series, opts) end

--- The series as a standalone SVG document (target band, line broken at gaps, points coloured
--- below/in/above the range, value and time labels).
--- Context: anywhere.
--- ```lua
--- local svg = chart.svg(entries, { low = 3.9, high = 10, mmol = true, title = "Last 24 h" })
--- print(chart.save(svg, "daily.svg"))
--- ```
---@param series table
---@param opts? chart.options
---@return string svg
function chart.svg(series, opts) end

--- Writes text (an SVG, a report) to a file in Lookout's reports folder
--- (`~/.local/state/lookout/reports/NAME`), replacing it atomically; returns the path.
--- Context: task only (waits).
--- Notes: `name` is a plain file name (letters, digits, `-`, `_`, `.`); scripts cannot write
--- elsewhere unless trusted. Returns `nil, err` (`err.code == "io"`) when the file cannot be written.
---@param text string
---@param name string e.g. "daily.svg"
---@return string|nil path
---@return table|nil err
function chart.save(text, name) end

return chart
