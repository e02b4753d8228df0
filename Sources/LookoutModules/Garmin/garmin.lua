---@meta garmin
--- Garmin Connect: daily health data (heart rate, sleep, steps, stress, body battery, HRV,
--- weight), activities and any Connect API path, for an account logged in with garth's tokens.
---
--- Tokens live in a garth token directory (`oauth1_token.json`, `oauth2_token.json`), so a
--- directory made by Python garth (`garth.save`) works here and the reverse; `lookout garmin
--- login` makes one. The short-lived OAuth2 token is refreshed automatically before it expires
--- (one refresh shared by every task of the process).
---
--- Methods wait without blocking other tasks and return `nil, err` on failure, with
--- `err.service == "garmin"` and `err.code` (also `err.kind`) one of "auth" (not logged in, a
--- rejected token or password), "mfa_required", "rate_limited" (HTTP 429, never retried;
--- `err.retry_after` in seconds when the server sent one), "http" (`err.status`), "network",
--- "invalid_response" or "config". Wrong argument types raise.
---
--- No data (a day without HRV or sleep, a future day: Garmin answers 204, `null` or an empty
--- list) is not an error: the method returns an empty table `{}` and no `err`, so `assert` passes
--- and `next(t) == nil` tells "no data" from data:
--- ```lua
--- local hrv = assert(me:hrv "2026-11-20")
--- if next(hrv) == nil then print("no HRV that night") else print(hrv.hrvSummary.lastNightAvg) end
--- ```
--- Data keeps Garmin's JSON shape and units (grams, metres, seconds, epoch milliseconds).
---@class garminlib
local garmin = {}

--- The account of a config profile (`[garmin.NAME]` in config.toml).
--- Context: anywhere.
--- Notes: the profile has `garth_home` (the token directory; default `GARTH_HOME`, else
--- `<state>/garmin/NAME`), `domain` ("garmin.com" or "garmin.cn"), and for `login` an `email`
--- with `password_env` or `password_file`. `url` points every host at one server (the simulator:
--- `lookout sim garmin`); `refresh_buffer = "60s"`, `timeout = "10s"`, `flow = "auto"|"mobile"|"widget"`.
--- Returns `nil, err` (`err.code == "config"`) when the profile is missing or unreadable.
--- ```lua
--- local me = assert(garmin.client "me")
--- ```
---@param name string the profile name
---@return garmin.Client|nil client
---@return table|nil err
function garmin.client(name) end

---@class garmin.Client
local Client = {}

---@class garmin.login_options
---@field mfa? fun(): string asked for the MFA code when the account needs one

--- Logs in with the profile's email and password and saves the tokens.
--- Context: task only (waits).
--- Notes: without `mfa`, or when it returns nil, an MFA account returns `nil, err` with
--- `err.code == "mfa_required"`; a wrong code returns `err.code == "auth"`.
--- ```lua
--- assert(me:login { mfa = function() return io.read() end })
--- ```
---@param opts? garmin.login_options
---@return true|nil ok
---@return table|nil err
function Client:login(opts) end

--- Token state without token values: `{logged_in, mfa, domain, expires_at, needs_refresh}`.
--- Context: task only (waits).
---@return table|nil status
---@return table|nil err
function Client:status() end

--- Exchanges the OAuth1 token for a new OAuth2 token now; returns its expiry (epoch seconds).
--- Context: task only (waits).
---@return integer|nil expires_at
---@return table|nil err
function Client:refresh() end

--- The social profile (`displayName`, `userName`, `fullName`, `profileId`, …).
--- Context: task only (waits).
---@return table|nil profile
---@return table|nil err
function Client:profile() end

--- The daily summary of a day (`totalSteps`, `restingHeartRate`, `averageStressLevel`, …).
--- Context: task only (waits).
---@param date? string "YYYY-MM-DD" (default today)
---@return table|nil summary
---@return table|nil err
function Client:daily_summary(date) end

--- Heart rate of a day: `restingHeartRate`, `minHeartRate`, `maxHeartRate`, and
--- `heartRateValues` as `{epoch_ms, bpm}` pairs.
--- Context: task only (waits).
--- ```lua
--- local hr = assert(me:heart_rate "2026-11-20")
--- print(hr.restingHeartRate, #hr.heartRateValues)
--- ```
---@param date? string "YYYY-MM-DD" (default today)
---@return table|nil heart_rate
---@return table|nil err
function Client:heart_rate(date) end

--- Sleep of the night ending on a day (`dailySleepDTO` with `sleepTimeSeconds`, `deepSleepSeconds`, …).
--- Context: task only (waits).
---@param date? string "YYYY-MM-DD" (default today)
---@return table|nil sleep
---@return table|nil err
function Client:sleep(date) end

--- Daily steps from `start` to `end` (at most 28 days): a list of `{calendarDate, totalSteps, totalDistance, stepGoal}`.
--- Context: task only (waits).
---@param start? string "YYYY-MM-DD" (default today)
---@param finish? string "YYYY-MM-DD" (default `start`)
---@return table[]|nil days
---@return table|nil err
function Client:steps(start, finish) end

--- Stress of a day: `avgStressLevel`, `maxStressLevel`, `stressValuesArray` and `bodyBatteryValuesArray`; `{}` without data.
--- Context: task only (waits).
---@param date? string "YYYY-MM-DD" (default today)
---@return table|nil stress
---@return table|nil err
function Client:stress(date) end

--- Body battery events of a day (sleep, activities) with their impact.
--- Context: task only (waits).
---@param date? string "YYYY-MM-DD" (default today)
---@return table[]|nil events
---@return table|nil err
function Client:body_battery(date) end

--- HRV of a night (`hrvSummary`, `hrvReadings`); `{}` without data.
--- Context: task only (waits).
---@param date? string "YYYY-MM-DD" (default today)
---@return table|nil hrv
---@return table|nil err
function Client:hrv(date) end

--- Weigh-ins of a day (`dateWeightList`, weights in grams).
--- Context: task only (waits).
---@param date? string "YYYY-MM-DD" (default today)
---@return table|nil weight
---@return table|nil err
function Client:weight(date) end

--- Activities, newest first.
--- Context: task only (waits).
---@param opts? {limit?: integer, start?: integer} page size (1 to 1000, default 20) and offset (default 0)
---@return table[]|nil activities
---@return table|nil err
function Client:activities(opts) end

--- Any Connect API GET: a path under connectapi and query parameters (lists repeat the key).
--- Context: task only (waits).
--- ```lua
--- local s = assert(me:get("/usersummary-service/stats/stress/daily/2026-11-01/2026-11-07"))
--- ```
---@param path string starting with "/"
---@param params? table<string, string|number|boolean|(string|number)[]>
---@return any|nil data `{}` for 204, an empty body or JSON null
---@return table|nil err
function Client:get(path, params) end
