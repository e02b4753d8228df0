---@meta alert
--- Alerts you can trust at night: conditions over any time series (Nightscout BG, Signal K
--- paths, Garmin metrics), freshness built in, escalation, acknowledgement, snooze, quiet hours.
---
--- An alert is in one of these states: "ok", "unknown" (fresh data, but not enough to judge yet,
--- e.g. a `sustained` window not yet covered — never read as OK), "firing", "stale" (the newest
--- point is older than `stale`, or there is no data: its own alert, never "ok"), "acked" and
--- "snoozed" (firing or stale, muted). Rules the library keeps:
--- - no alert fires on data older than its `stale` window; missing data is "stale";
--- - no false alert right after start: a condition that cannot be judged yet is "unknown", and
---   "no data at all" notifies only once the script has run for the `stale` window;
--- - an "urgent" alert is never muted by quiet hours, and a snooze only ever mutes the alert it was
---   given for; an urgent alert can be snoozed only while it fires, for that episode only; an
---   acknowledgement of an urgent alert expires after `ack_expires` (default 30 min);
--- - every notification has an id made of alert, episode, number and channel and goes through the
---   durable notification queue: checking again after a crash does not send it twice.
--- Acknowledgements and state are kept in the state database, so `lookout ack ID` (another
--- process) and a restart see them. Alert ids are global across scripts.
--- Time is the script's clock (virtual under `lookout test`).
---@class alertlib
local alert = {}

---@class alert.Condition
---@field kind string
---@field text string a description ("below 55 for 15m")

--- True while the newest value is below `x`.
---@param x number
---@return alert.Condition
function alert.below(x) end

--- True while the newest value is above `x`.
---@param x number
---@return alert.Condition
function alert.above(x) end

--- A custom condition: `fn(value, time, points, i)` returns true, false, or nil ("cannot judge").
---@param fn fun(value: any, time: integer, points: table, i: integer): boolean|nil
---@return alert.Condition
function alert.when(fn) end

--- True when `cond` held at every point of the last `window` (the data must cover the whole
--- window, with no gap longer than the alert's `max_gap`); "cannot judge" until it does.
--- ```lua
--- when = alert.sustained(alert.below(70), "15m")
--- ```
---@param cond alert.Condition
---@param window string|number "15m" or seconds
---@return alert.Condition
function alert.sustained(cond, window) end

--- True when the value fell at least `per_minute` per minute over `over` (default "15m"; at least
--- half of it must be covered by data).
---@param per_minute number
---@param over? string|number
---@return alert.Condition
function alert.falling(per_minute, over) end

--- True when the value rose at least `per_minute` per minute over `over` (default "15m").
---@param per_minute number
---@param over? string|number
---@return alert.Condition
function alert.rising(per_minute, over) end

--- True when every condition is true (false if one is false; else "cannot judge" if one cannot).
---@param conds alert.Condition[]
---@return alert.Condition
function alert.all(conds) end

--- True when one condition is true.
---@param conds alert.Condition[]
---@return alert.Condition
function alert.any(conds) end

--- True when no condition is true.
---@param conds alert.Condition[]
---@return alert.Condition
function alert.none(conds) end

--- The negation of a condition ("cannot judge" stays so).
---@param cond alert.Condition
---@return alert.Condition
function alert.not_(cond) end

---@class alert.Step
---@field after string|number how long after the episode started (or a snooze ended), unacknowledged
---@field notify (string|alert.Route)[] channels added at this step

---@class alert.Route
---@field channel string a channel used only between `from` and `to` (local time, may wrap midnight)
---@field from string "23:00"
---@field to string "07:00"
--- If routing leaves no channel open at the moment, every channel of the list is used: routes
--- never make an alert silent.

---@class alert.Options
---@field id string unique id, letters, digits, `-`, `_`, `.` (used by `lookout ack ID`)
---@field title? string default: the id
---@field severity? "urgent"|"warning"|"info" default "warning"
---@field series fun(): (any, integer?) returns value, time (epoch ms), or a list of {value, time} / {value=, time=}
---@field when alert.Condition when it fires
---@field clear? alert.Condition when it stops firing (hysteresis); default: `when` is false
---@field stale? string|number data older than this is "stale" (default "15m")
---@field max_gap? string|number the longest gap `sustained` accepts inside its window (default: `stale`)
---@field notify? (string|alert.Route)[] channel names (`[notify.NAME]`); "all" means every configured channel
---@field escalate? alert.Step[] more channels while unacknowledged
---@field repeat_every? string|number notify again while firing and unacknowledged
---@field quiet_hours? {from: string, to: string} "23:00" to "07:00", local time: mutes (holds) non-urgent notifications
---@field message? string|fun(value: any, time: integer): string the text (default "Title: value"; missing data reads "No data for 16 min, last …" under the title "No data (Title)")
---@field units? "mg/dL"|"mmol" the series is glucose in mg/dL: texts show it in these units with the other in parentheses and the trend arrow (a point's `direction`, or the series' third value), e.g. "Low: 3.3 mmol/L (60 mg/dL) ↘"
---@field resolved? boolean also send "resolved" when it clears (default false); set it for Signal K channels, where it returns the notification to state "normal"
---@field stale_severity? "urgent"|"warning"|"info" severity of the stale alert (default: `severity`)
---@field stale_notify? boolean false: missing data shows as state "stale" but notifies only when it interrupts a firing episode — for a set of alerts over one series where one alert (e.g. "no data") reports gaps (default true)
---@field ack_expires? string|number an acknowledgement stops muting after this (default 30m for urgent, never otherwise)

---@class alert.Alert
---@field id string
---@field title string
---@field severity string
local Alert = {}

--- Defines an alert. Unknown options and wrong types raise, naming the option.
--- ```lua
--- local low = alert.define {
---   id = "urgent-low", title = "Urgent low", severity = "urgent",
---   series = function() local e = home:latest(); return e and e.sgv, e and e.date end,
---   when = alert.below(55), clear = alert.above(70), stale = "15m",
---   notify = { "phone" }, escalate = { { after = "10m", notify = { "partner" } } },
---   repeat_every = "5m", quiet_hours = { from = "23:00", to = "07:00" },
--- }
--- schedule.every("1m", function() low:check() end)
--- ```
---@param opts alert.Options
---@return alert.Alert
function alert.define(opts) end

--- Reads the series, judges, moves the state, and sends what is due. Returns the state.
--- Context: task only (waits for the state database and the notification queue).
---@return "ok"|"unknown"|"firing"|"stale"|"acked"|"snoozed"
function Alert:check() end

--- The alert's status: `{id, title, severity, state, since, episode, acked_by, acked_at,
--- snoozed_until, value, time, level, last_notified, error, why}` (times in epoch ms; `why`
--- says why the data puts the alert in its state, e.g. "pending: below 70 for 9 min of 15 min
--- (last 64, 1 min ago)").
---@return table
function Alert:status() end

--- Checks every alert of the script (an error in one is reported and does not stop the others).
--- Context: task only.
---@return table<string, string> states by id
function alert.check_all() end

--- The alert defined with `id` in this script, or nil.
---@param id string
---@return alert.Alert|nil
function alert.get(id) end

--- The status of every alert of this script, in definition order.
---@return table[]
function alert.list() end

--- Acknowledges the current episode of alert `id` (any script's; also `lookout ack ID`). Stops
--- its repeats and escalation until the episode ends (or the acknowledgement expires).
--- Context: task only.
---@param id string
---@param by? string who (default: the script's name)
---@return {id: string, episode: integer, by: string, at: integer}|nil ack
---@return table|nil err `code` "not_found" or "not_alerting"
function alert.ack(id, by) end

--- Mutes alert `id` of this script for `duration`. Urgent alerts only while firing, for that episode.
--- People snooze from outside too (`lookout ack ID --snooze 30m`, the web view's Snooze button):
--- such a snooze mutes the alert's current episode only, urgent or not; `check` takes it up.
--- Context: task only.
---@param id string
---@param duration string|number
---@return {id: string, until: integer}|nil
---@return table|nil err `code == "urgent"` when an urgent alert is not firing
function alert.snooze(id, duration) end

--- Ends a snooze.
--- Context: task only.
---@param id string
---@return boolean
function alert.unsnooze(id) end

return alert
