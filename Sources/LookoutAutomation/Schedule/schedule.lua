---@meta schedule
--- Run functions on a wall-clock schedule: every interval, on a cron expression, or daily at a time.
---
--- Times are in the configured time zone (`[serve] timezone` in config.toml, else `$TZ`, else the
--- system's); `schedule.timezone` names it. Jobs are kept alive by the host (no need to keep the
--- handle). Each run is a task of its own (it may wait: HTTP, Nightscout, sleep…); its errors are
--- reported with their traceback and the job keeps its schedule. A run never overlaps the previous
--- run of the same job: a run that comes due while the last one still runs is skipped.
---
--- Missed runs (the host was stopped, the machine slept): the last run of each job is remembered
--- in the state database (by script and job name), so a restarted `lookout serve` knows. With
--- `missed = "once"` (the default) a missed run happens once at wake — never a burst, however
--- many were missed; with `missed = "skip"` a run more than a minute late is skipped. Daylight
--- saving: a job at a fixed hour runs once when the clock goes back, and right after the gap when
--- it jumps forward over the job's time.
---@class schedulelib
---@field timezone string the time zone's name, e.g. "Europe/Berlin"
local schedule = {}

---@class schedule.Options
---@field name? string the job's name (default: kind and spec, e.g. "every 5m"); names the remembered last run
---@field missed? "once"|"skip" what to do about a run missed while the host was away (default "once")

--- Runs `fn(job)` every interval. The first run is at once, unless an earlier run is remembered:
--- then one interval after it.
--- Context: anywhere.
---@param interval number|string seconds (at least 1), or a duration such as "30s", "5m", "1h"
---@param fn fun(job: schedule.Job) called as a new task each time
---@param opts? schedule.Options
---@return schedule.Job job
function schedule.every(interval, fn, opts) end

--- Runs `fn(job)` when a 5-field cron expression matches: `minute hour day-of-month month
--- day-of-week`, with `*`, ranges `1-5`, steps `*/15` `8-18/2`, lists `1,15`, names `jan`…`dec`,
--- `sun`…`sat` (0 and 7 are Sunday) and `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`.
--- When both day fields are restricted, a day matches if either does (as in cron).
--- Context: anywhere.
--- Notes: `schedule.cron("*/5 * * * *", fn)`; `schedule.cron("30 7 * * mon-fri", fn)`.
---@param expression string
---@param fn fun(job: schedule.Job) called as a new task each time
---@param opts? schedule.Options
---@return schedule.Job job
function schedule.cron(expression, fn, opts) end

--- Runs `fn(job)` daily at a local time: `"07:00"`, or on given weekdays: `"Mon 07:00"`,
--- `"Mon-Fri 06:45"`, `"sat,sun 09:30"`.
--- Context: anywhere.
---@param time string
---@param fn fun(job: schedule.Job) called as a new task each time
---@param opts? schedule.Options
---@return schedule.Job job
function schedule.at(time, fn, opts) end

--- The jobs of this script that have not been stopped.
--- Context: anywhere.
--- Notes: times are epoch milliseconds; `last_ok`/`last_error` describe the last run that ended.
---@return {name: string, kind: "every"|"cron"|"at", spec: string, next: integer?, last_run: integer?, last_ok: boolean?, last_error: string?, runs: integer, skipped: integer}[] jobs
function schedule.jobs() end

---@class schedule.Job
---@field name string the job's name
---@field kind "every"|"cron"|"at"
---@field spec string the schedule as written
local Job = {}

--- The next run, in epoch milliseconds (nil once stopped, or for a moment while the job starts).
---@return integer|nil ms
function Job:next() end

--- Stops the job: no more runs; a run in progress finishes. Returns false if already stopped.
---@return boolean stopped
function Job:stop() end

--- Whether the job is still scheduled (not stopped).
---@return boolean
function Job:running() end

--- Whether a run is in progress now.
---@return boolean
function Job:busy() end
