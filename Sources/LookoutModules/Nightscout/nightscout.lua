---@meta nightscout
--- Nightscout sites: glucose entries, treatments, device status and profiles.
---
--- A client talks API v3 when it has an access token (or a JWT) and the server has v3, and API
--- v1 otherwise (an API secret, or a server older than Nightscout 14); `client:api()` tells which.
--- Reads and uploads work with both. `read`, `update`, `patch`, `delete`, `history` and
--- `last_modified` need v3.
---
--- Methods wait without blocking other tasks and return `nil, err` on failure, with
--- `err.service == "nightscout"` and `err.code` one of "auth" (401; 403 for a missing permission;
--- or a recent failed login: see `err.retry_after`), "http" (`err.status`; 429/503 carry `err.retry_after`), "network",
--- "timeout", "invalid_response", "unsupported" (needs v3), "no_data", "config" or "invalid";
--- `err.retryable` says whether trying later may help. Wrong argument types raise.
---
--- Documents are plain tables with the server's field names, exactly as the server sent them,
--- plus the missing form of their time: every document has `date` (epoch ms) and an ISO string
--- (`dateString` for entries, `created_at` for the rest). Times given to methods are epoch
--- milliseconds or ISO-8601 strings; a number that looks like seconds (`os.time()`) raises.
--- Glucose values are mg/dL, as Nightscout stores them.
---@class nightscoutlib
local nightscout = {}

--- A client for the site of a config profile (`[nightscout.NAME]` in config.toml).
--- Context: anywhere.
--- Notes: the profile has `url`, one credential (`token_env`/`token_file` for an access token,
--- `jwt_env`/`jwt_file`, or `secret_env`/`secret_file` for the API secret), and optionally
--- `api = "v1"` (prefer v1), `fallback = false` (never fall back to v1), `timeout = "30s"` and
--- `units = "mmol"` or `"mg/dL"` (how people read glucose here; default: the site's own setting).
--- Returns `nil, err` (`err.code == "config"`) when the profile is missing or a secret cannot
--- be read. Clients of one profile share one connection pool and token per process.
--- ```lua
--- local home = assert(nightscout.client "home")
--- ```
---@param name string the profile name
---@return nightscout.Client|nil client
---@return table|nil err
function nightscout.client(name) end

---@class nightscout.connect_options
---@field url string the site, e.g. "https://my.ns.example" (required)
---@field token? string an access token the script holds itself (literal)
---@field jwt? string a JWT the script holds itself (literal)
---@field secret? string the API secret (v1 only), if the script holds it itself (literal)
---@field api? "v3"|"v1" the API to prefer (default "v3")
---@field fallback? boolean use v1 when v3 is not possible (default true)
---@field timeout? number|string per request: seconds or "30s" (default 30 s; 0s to 1d)
---@field units? "mg/dL"|"mmol" how people read glucose here (default: the site's own setting)

--- A client for a site given by options: an ad-hoc client, for open sites or a credential the
--- script already holds. For real use, put the site and its credential in a profile and use
--- `nightscout.client "NAME"`: the owner of the machine chooses there which variable or file holds it.
--- Context: anywhere.
--- Notes: unknown options raise. Credentials are literal strings only: `token_env`, `secret_file`
--- and the like raise `bad argument` (a script never names a variable or a file for the host to
--- read, and learns nothing about which exist). Clients from `connect` cannot send remote
--- commands (those need a profile's limits).
--- ```lua
--- local open = assert(nightscout.connect { url = "http://127.0.0.1:1337" })
--- local ns = assert(nightscout.connect { url = "http://127.0.0.1:1337", token = "reader-0123456789abcdef" })
--- ```
---@param opts nightscout.connect_options
---@return nightscout.Client|nil client
---@return table|nil err
function nightscout.connect(opts) end

--- The trend arrow name for a slope in mg/dL per minute (xDrip4iOS thresholds): > 3.5
--- "DoubleUp", > 2 "SingleUp", > 1 "FortyFiveUp", > -1 "Flat", > -2 "FortyFiveDown", > -3.5
--- "SingleDown", else "DoubleDown"; "NOT COMPUTABLE" for NaN or infinity.
--- Context: anywhere.
---@param slope number mg/dL per minute
---@return string direction
function nightscout.direction(slope) end

--- Converts mg/dL to mmol/L (× 0.0555, unrounded).
--- Context: anywhere.
---@param mgdl number
---@return number mmol
function nightscout.to_mmol(mgdl) end

--- Converts mmol/L to mg/dL (× 18.018, unrounded).
--- Context: anywhere.
---@param mmol number
---@return number mgdl
function nightscout.to_mgdl(mmol) end

--- The arrow people read for a direction name: "DoubleUp" ↑↑, "SingleUp" ↑, "FortyFiveUp" ↗,
--- "Flat" →, "FortyFiveDown" ↘, "SingleDown" ↓, "DoubleDown" ↓↓; "?" for "NOT COMPUTABLE" and
--- "RATE OUT OF RANGE"; "" for nil, "NONE" or unknown text. Arrows are for people; data
--- (Signal K paths, uploads) keeps the names.
--- Context: anywhere.
---@param direction string|nil
---@return string arrow
function nightscout.arrow(direction) end

---@class nightscout.format_options
---@field units? "mg/dL"|"mmol" the unit to show first (default: the `units` the config's Nightscout profiles agree on, else what a `client:units()` learned from its site, else "mg/dL")
---@field other? boolean the other unit in parentheses (default true; false where space is short)
---@field direction? string a direction name: its arrow follows the value

--- Glucose as people read it: the value with its unit, the other unit in parentheses and the
--- trend arrow. mg/dL are whole numbers, mmol/L have one decimal. `value` is mg/dL (as Nightscout
--- stores it), or an entry (`sgv` and `direction` are used). The one formatter of Lookout: the
--- ready scripts, the demo and the REPL show glucose with it.
--- Context: anywhere.
--- ```lua
--- nightscout.format_bg(62, { direction = "FortyFiveUp" })   --> "62 mg/dL (3.4 mmol/L) ↗"
--- nightscout.format_bg(62, { units = "mmol" })              --> "3.4 mmol/L (62 mg/dL)"
--- nightscout.format_bg(home:latest().entry, { units = home:units(), other = false })
--- ```
---@param value number|table mg/dL, or an entry
---@param opts? nightscout.format_options
---@return string text
function nightscout.format_bg(value, opts) end

---@class nightscout.Client
local Client = {}

---@class nightscout.read_options
---@field count? integer documents, newest first (1 to 100000; default: every document in the range when `from` or `last` is given, else 10, treatments 100)
---@field from? number|string earliest event time (epoch ms or ISO), inclusive
---@field to? number|string latest event time, inclusive
---@field last? number|string a duration back from now instead of `from`: "3h", "15m", 900
---@field sort? string sort ascending by this field (v3 only)
---@field sort_desc? string sort descending by this field (v3 only; default "date")
---@field skip? integer documents to skip (v3 only)
---@field fields? string[] only these fields (v3 only)
---@field type? string entries only: the entry type, `"sgv"`, `"mbg"` or `"cal"` (a filter)
---@field eventType? string treatments only: the event type, `"Correction Bolus"` … (a filter)
---@field find? table filters on any field: `find = {device = "xDrip"}`, or operators `{sgv = {gte=…, lte=…, gt=…, lt=…, ne=…, ["in"]={…}, nin={…}, re="…"}}` (in, nin and re need v3). Any other option key raises `unknown option 'cnt' (did you mean 'count'?)`.

--- Glucose entries (`sgv`, `mbg`, `cal`), newest first.
--- Context: task only (waits).
--- Notes: always sends a date bound and a count, so the server's silent 4-day window never
--- applies: `count = 1` finds the newest reading however old it is.
--- ```lua
--- for _, e in ipairs(assert(home:entries { last = "1h", type = "sgv" })) do
---   print(e.dateString, e.sgv, e.direction)
--- end
--- ```
---@param opts? nightscout.read_options
---@return table[]|nil entries
---@return table|nil err
function Client:entries(opts) end

--- Treatments (boluses, carbs, temp basals, notes …), newest first.
--- Context: task only (waits).
--- ```lua
--- local boluses = assert(home:treatments { last = "6h", eventType = "Correction Bolus" })
--- ```
---@param opts? nightscout.read_options
---@return table[]|nil treatments
---@return table|nil err
function Client:treatments(opts) end

--- Device status documents (uploader battery, loop/openaps state, pump), newest first.
--- Context: task only (waits).
---@param opts? nightscout.read_options
---@return table[]|nil statuses
---@return table|nil err
function Client:devicestatus(opts) end

--- Documents of any collection: "entries", "treatments", "devicestatus", "profile", "food" or
--- "settings" (v1 reads only the first three).
--- Context: task only (waits).
--- Notes: default count 100; more than 1000 are fetched in pages of 1000.
--- ```lua
--- local lows = assert(home:search("entries", { find = { sgv = { lt = 70 } }, last = "24h", count = 500 }))
--- ```
---@param collection string
---@param opts? nightscout.read_options
---@return table[]|nil documents
---@return table|nil err
function Client:search(collection, opts) end

--- One document by its v3 identifier.
--- Context: task only (waits).
--- Notes: needs v3. An absent document gives `err.status == 404`, a deleted one 410.
---@param collection string
---@param identifier string
---@return table|nil document
---@return table|nil err
function Client:read(collection, identifier) end

---@class nightscout.Profile
---@field defaultProfile string the name of the profile in use
---@field store table<string, table> the named profiles (basal, carbratio, sens, target_low, target_high, timezone, units, dia)
---@field startDate string when the profile set took effect
local Profile = {}

--- The newest profile set, with schedule lookups as methods.
--- Context: task only (waits).
--- Notes: a site without a profile gives `nil, err` with `err.code == "no_data"`.
--- ```lua
--- local p = assert(home:profile())
--- print(p:basal(), p:sens(), p:carbratio(), p:targets())
--- ```
---@return nightscout.Profile|nil profile
---@return table|nil err
function Client:profile() end

--- The value of a schedule in force at a time, read in the profile's time zone (UTC if it has
--- none): "basal", "carbratio", "sens", "target_low" or "target_high".
--- Context: anywhere.
--- Notes: `at` defaults to now, `name` to the set's `defaultProfile` (or, when that is missing
--- or names no profile in `store`, the first profile by name); nil when the schedule is empty.
--- A name given that the store lacks raises.
---@param kind string
---@param at? number|string
---@param name? string
---@return number|nil value
function Profile:value(kind, at, name) end

--- The basal rate (U/h) in force at a time (default now).
--- Context: anywhere.
---@param at? number|string
---@param name? string a profile other than the default
---@return number|nil rate
function Profile:basal(at, name) end

--- The insulin sensitivity in force at a time (default now), in the profile's units.
--- Context: anywhere.
---@param at? number|string
---@param name? string
---@return number|nil sensitivity
function Profile:sens(at, name) end

--- The carb ratio (g/U) in force at a time (default now).
--- Context: anywhere.
---@param at? number|string
---@param name? string
---@return number|nil ratio
function Profile:carbratio(at, name) end

--- The low and high targets in force at a time (default now).
--- Context: anywhere.
---@param at? number|string
---@param name? string
---@return number|nil low
---@return number|nil high
function Profile:targets(at, name) end

---@class nightscout.Latest
---@field sgv number mg/dL
---@field mmol number mmol/L, one decimal
---@field direction string|nil trend arrow name ("Flat", "SingleDown" …)
---@field delta number|nil mg/dL per 5 minutes against the previous reading, when that is at most 15 minutes older
---@field date integer epoch ms of the reading
---@field dateString string ISO time of the reading
---@field age number seconds since the reading (by this machine's clock)
---@field device string|nil
---@field entry table the whole entry

--- The newest glucose reading, ready for an alert.
--- Context: task only (waits).
--- Notes: `nil, err` with `err.code == "no_data"` when the site has no readings. Check `age`
--- before trusting a value: a reading 20 minutes old is not a current glucose.
--- ```lua
--- local bg = assert(home:latest())
--- if bg.age < 600 and bg.sgv < 70 then log.warn("low:", bg.sgv, bg.direction) end
--- ```
---@return nightscout.Latest|nil latest
---@return table|nil err
function Client:latest() end

--- Every document changed after a time, in the server's order of modification, deletions
--- included (`doc.isValid == false`): the basis of incremental sync.
--- Context: task only (waits); iterate it with `for`.
--- Notes: needs v3. Fetches pages of `opts.page` documents (default 1000) as the loop goes on;
--- documents sharing one millisecond across pages are neither lost nor repeated. `since` is
--- exclusive (`srvModified` greater than it): keep the largest `doc.srvModified` and pass it to
--- resume later without repeating the last document. A failed page raises the `err` table from the
--- loop. Documents written through API v1 never appear in history (a Nightscout rule).
--- ```lua
--- local mark = store.get("mark", 0)
--- for doc in home:history("treatments", mark > 0 and mark or nil) do
---   mark = math.max(mark, doc.srvModified)
--- end
--- store.set("mark", mark)
--- ```
---@param collection string
---@param since? number|string epoch ms or ISO (default: everything)
---@param opts? {page?: integer}
---@return fun(): table|nil iterator
function Client:history(collection, since, opts) end

--- The time of the latest change in each collection.
--- Context: task only (waits).
--- Notes: needs v3. Returns `{srvDate = ms, collections = {entries = ms, treatments = ms, …}}`.
---@return table|nil last_modified
---@return table|nil err
function Client:last_modified() end

--- The server's status: `version`, `settings` (units, thresholds …), `serverTime`.
--- Context: task only (waits).
---@return table|nil status
---@return table|nil err
function Client:status() end

--- The unit people of this site read glucose in, "mg/dL" or "mmol": the profile's `units`
--- setting, else the site's own (its status settings, asked once), else "mg/dL". Values stay
--- mg/dL in documents; this is for showing them (`nightscout.format_bg(v, {units = …})`).
--- Context: task only when the site must be asked.
---@return "mg/dL"|"mmol"|nil units
---@return table|nil err
function Client:units() end

--- The API this client uses, "v3" or "v1" (asks the server once whether it has v3).
--- Context: task only (waits).
---@return string|nil api
---@return table|nil err
function Client:api() end

--- Creates a document through the outbox (see the `outbox` module): it is stored first, then
--- sent; the answer is the outbox item, with `state == "sent"` once the server has it, or
--- `"pending"` when the first attempt failed in a way that may pass (network, 429, 5xx: it is
--- retried in the background and by later runs) or got no answer within the client's timeout. A refusal that
--- retrying cannot fix (400, 401, 403, 422) returns `nil, err` with `err.outbox_id`; the item
--- stays in the outbox as "failed". `app` is set to "lookout" when absent, `date` from the ISO
--- time when only that is given (a document with neither is dated now, both forms, as API v3
--- needs a date), and `identifier` is made when absent (the server's own UUID v5 of device, date
--- and eventType), so queuing or sending the same document again stores it once. A document
--- with the identifier of one queued before but other content (same date and device, other
--- `notes`) is not queued again: the answer is the first item with `deduplicated = true`.
--- Context: task only (waits).
---@param collection string
---@param doc table
---@return outbox.Item|nil item
---@return table|nil err
function Client:create(collection, doc) end

--- Replaces a whole document (fields missing from `doc` are removed), or inserts it.
--- Context: task only (waits).
--- Notes: needs v3. Returns `{created = bool, identifier = …, last_modified = ms}`.
---@param collection string
---@param identifier string
---@param doc table
---@return table|nil result
---@return table|nil err
function Client:update(collection, identifier, doc) end

--- Sets some fields of a document.
--- Context: task only (waits).
--- Notes: needs v3. A read-only document gives `err.status == 422`.
---@param collection string
---@param identifier string
---@param fields table
---@return true|nil ok
---@return table|nil err
function Client:patch(collection, identifier, fields) end

--- Deletes a document: softly (it stays in history with `isValid = false`), or for good with
--- `{permanent = true}`.
--- Context: task only (waits).
--- Notes: needs v3.
---@param collection string
---@param identifier string
---@param opts? {permanent?: boolean}
---@return true|nil ok
---@return table|nil err
function Client:delete(collection, identifier, opts) end

---@class nightscout.bg_reading
---@field sgv number glucose in mg/dL (1 to 1000)
---@field date number|string when it was measured: epoch ms or ISO (required)
---@field direction? string the trend arrow; else computed from `slope`
---@field slope? number mg/dL per minute, for the direction
---@field device? string the uploading device
---@field raw? number the raw sensor value (`filtered`/`unfiltered` are raw × 1000)

--- Uploads a glucose reading as xDrip4iOS does: an `sgv` entry with `date`, `dateString`,
--- `sysTime`, direction, noise and an identifier computed from device and time, so uploading
--- the same reading again does not duplicate it. Goes through the outbox like `create`.
--- Context: task only (waits).
--- ```lua
--- assert(home:upload_bg { sgv = 112, date = 1714557600000, slope = -0.4, device = "lookout-demo" })
--- ```
---@param reading nightscout.bg_reading
---@return outbox.Item|nil item
---@return table|nil err
function Client:upload_bg(reading) end

--- Uploads a treatment. `eventType` is required ("Correction Bolus", "Carb Correction",
--- "Meal Bolus", "Temp Basal", "Note" …); `insulin`, `carbs`, `protein`, `fat`, `duration`,
--- `absolute`, `rate` and `glucose` must be non-negative numbers. The time is `created_at` or
--- `date` (epoch ms or ISO), default now; `enteredBy` and `app` default to "lookout". Goes
--- through the outbox like `create`.
--- Context: task only (waits).
--- ```lua
--- assert(home:upload_treatment { eventType = "Carb Correction", carbs = 15, notes = "juice" })
--- ```
---@param treatment table
---@return outbox.Item|nil item
---@return table|nil err
function Client:upload_treatment(treatment) end

---@class nightscout.sync_report
---@field added string[] identifiers new to the mirror (or back after a deletion)
---@field updated string[] identifiers whose `srvModified` changed
---@field deleted string[] identifiers that arrived soft-deleted (kept in the mirror as tombstones)
---@field unchanged integer documents the mirror already had unchanged
---@field pages integer pages fetched
---@field documents integer documents received
---@field watermark? integer the stored history watermark (`srvModified`, epoch ms)
---@field missed_by_history? string[] `full_sync` only: found by search but not by history (e.g. written through API v1)
---@field missing_on_server? string[] `full_sync` only: in the mirror but no longer on the server (left in the mirror)
---@field api? string `full_sync` only: the API the range was read with ("v3" or "v1")

--- Pulls every change after the stored watermark (v3 history) into the local mirror in the
--- state database, page by page; each page is stored with the advanced watermark in one
--- transaction, so an interrupted sync resumes without gaps or repeats. The lists encode as
--- JSON arrays even when empty. Only one sync of a collection runs at a time per process (a
--- second one gives `nil, err` with `err.code == "invalid"`).
--- Context: task only (waits).
--- Notes: needs v3. Documents written through API v1 never appear in history: use `full_sync`.
--- ```lua
--- local r = assert(home:sync "entries")
--- print(#r.added, #r.updated, #r.deleted, r.unchanged)
--- ```
---@param collection string
---@return nightscout.sync_report|nil report
---@return table|nil err
function Client:sync(collection) end

--- Syncs history (with v3), then reads every document of the collection dated in the range by
--- search (v1 reads when the client uses v1) and stores what the mirror lacks: `missed_by_history`
--- lists those, `missing_on_server` lists mirrored documents the server no longer returns.
--- `from` (alias `since`) defaults to the beginning of time, `to` to now; `last = "30d"` means
--- from 30 days ago. Times are epoch ms or ISO.
--- Context: task only (waits).
--- ```lua
--- local r = assert(home:full_sync("treatments", { last = "30d" }))
--- print(#r.missed_by_history, #r.missing_on_server)
--- ```
---@param collection string
---@param opts? {from?: number|string, since?: number|string, to?: number|string, last?: string|number}
---@return nightscout.sync_report|nil report
---@return table|nil err
function Client:full_sync(collection, opts) end

--- Reads the local mirror (what `sync`/`full_sync` stored), without the network: documents as
--- plain tables with both time forms, newest first. Options: `from` (alias `since`), `to`,
--- `last` (a duration back from now), `count` (alias `limit`; default: all) and
--- `deleted = true` to include soft-deleted documents. Called with only a collection it returns
--- a function that takes the options, so both forms below work.
--- Context: task only (waits).
--- ```lua
--- local today = assert(home:mirror("entries", { last = "24h" }))
--- local recent = assert(home:mirror "entries" { since = "2024-05-01T00:00:00Z", count = 10 })
--- ```
---@param collection string
---@param opts? {from?: number|string, since?: number|string, to?: number|string, last?: string|number, count?: integer, limit?: integer, deleted?: boolean}
---@return table[]|fun(opts?: table): table[]|nil, table|nil documents
---@return table|nil err
function Client:mirror(collection, opts) end

---@class nightscout.command_options
---@field notes? string sent with the command (Loop shows it)
---@field wait? number|string|false how long to wait for Loop's answer (default "5m", polled every 15 s or a quarter of the wait if shorter); false returns once Nightscout accepted it

---@class nightscout.CommandResult
---@field state "dry_run"|"confirmed"|"sent"|"unknown" what happened: a dry run (nothing sent), Loop enacted it, Nightscout accepted it (not waiting), or Loop has not answered in time
---@field command string e.g. "bolus 1.5 U"
---@field detail string|nil

--- Asks Loop, through Nightscout, to deliver a bolus (Loop remote commands, needs Loop's OTP).
--- Context: task only (waits).
--- Notes: safety first. Every command must pass the site's limits, which only the config
--- sets: `max_bolus`, `max_bolus_per_hour` (a rolling hour, counting commands in flight),
--- `min_interval`, `duplicate_window`; without them nothing is sent. The budget is per site,
--- shared by every script, profile and process of the machine, and the strictest limits of all
--- profiles naming the site apply. A sent command counts in full even when Loop reports a
--- failure (`err.code == "loop"`): only `lookout remote release ID` gives it back. Unless the profile says
--- `remote = "live"` a command is a dry run: it is checked and logged, never sent. In the REPL a
--- live command asks on the terminal first. Every attempt, refusal, send and outcome is in the
--- audit log (`lookout audit`). A refusal returns `nil, err` with `err.code == "refused"` and
--- `err.reason` (e.g. "exceedsHourlyTotal"); an amount that is not a Lua number ("1.5", nil, NaN)
--- is refused, not converted. Other failures: "declined" (at the terminal), "config" (no OTP
--- URL), "loop" (Loop refused: `err.message` has its note), "http"/"network".
--- ```lua
--- local r, err = home:bolus(1.5, { notes = "pizza" })
--- if not r then log.warn("bolus not sent:", err) end
--- ```
---@param units number insulin units, in steps of 0.01
---@param opts? nightscout.command_options
---@return nightscout.CommandResult|nil result
---@return table|nil err
function Client:bolus(units, opts) end

--- Asks Loop to record carbs (needs Loop's OTP); limits `max_carbs`, `max_carbs_per_hour`.
--- Context: task only (waits).
--- Notes: as `bolus`. `opts.absorption` is hours (Loop's default 3), `opts.at` the time eaten.
---@param grams number
---@param opts? {absorption?: number, at?: number|string, notes?: string, wait?: number|string|false}
---@return nightscout.CommandResult|nil result
---@return table|nil err
function Client:carbs(grams, opts) end

--- Asks Loop to start an override preset; only names listed in the profile's `overrides` are sent.
--- Context: task only (waits).
---@param name string the preset's name in Loop, exactly
---@param opts? {duration?: number|string, notes?: string, wait?: number|string|false} duration: "1h", or seconds
---@return nightscout.CommandResult|nil result
---@return table|nil err
function Client:override(name, opts) end

--- Asks Loop to cancel the running override (allowed when the profile lists any override).
--- Context: task only (waits).
---@param opts? {notes?: string, wait?: number|string|false}
---@return nightscout.CommandResult|nil result
---@return table|nil err
function Client:cancel_override(opts) end

--- Closed-loop on/off: Loop cannot receive it through Nightscout's Remote 1.0 path, so this
--- always returns `nil, err` with `err.code == "unsupported"`; on a site with Remote 2.0 use
--- `home:remote_command("closed_loop", on)`.
--- Context: anywhere.
---@param on boolean
---@return nil
---@return table err
function Client:closed_loop(on) end

--- Autobolus on/off: not supported by Nightscout's Loop path, like `closed_loop`.
--- Context: anywhere.
---@param on boolean
---@return nil
---@return table err
function Client:autobolus(on) end

---@class nightscout.RemoteCommand
---@field id string|nil the site's `_id` (nil for a dry run or a command sent through Remote 1.0)
---@field state "pending"|"in_progress"|"success"|"error"|"dry_run"|"sent"|"confirmed"|"unknown" 2.0 states; on fallback the 1.0 result's state
---@field message string Loop's message (why it failed), or the dry run's text
---@field command string e.g. "bolus 1.5 U", "closed loop off"
---@field via "v2"|"v1" the path it took
---@field created string|nil ISO time the command was created (its OTP is for this time)
---@field fallback string|nil set when the site has no Remote 2.0 and the command went through 1.0
local RemoteCommand = {}

--- Follows the command's status on the site until `success` or `error`, or the timeout.
--- Context: task only (waits; other tasks run). Polls every `interval` (default "5s").
--- Returns the handle when final (check `cmd.state`), `nil, err` with `err.code == "timeout"`
--- (and `err.state`) when still pending or in progress, or `nil, err` for a network failure.
--- A handle without `id` (dry run, fallback to 1.0) returns at once.
--- ```lua
--- local cmd = assert(home:remote_command("bolus", 1.5))
--- local done, err = cmd:wait { timeout = "2m" }
--- if done and done.state == "error" then log.warn("Loop refused:", done.message) end
--- ```
---@param opts? {timeout?: number|string, interval?: number|string}
---@return nightscout.RemoteCommand|nil cmd
---@return table|nil err
function RemoteCommand:wait(opts) end

--- Asks the site once for the command's state; updates `cmd.state` and `cmd.message`.
--- Context: task only (waits).
---@return string|nil state
---@return string|table message or err
function RemoteCommand:status() end

--- Sends a Loop Remote 2.0 command: stored on the site (`/api/v2/remotecommands`), picked up by
--- Loop, which moves it from "pending" through "in_progress" to "success" or "error".
--- Context: task only (waits).
--- Notes: `kind` is "bolus", "carbs", "override", "cancel_override", "closed_loop" or
--- "autobolus", followed by the same arguments as the 1.0 methods (`bolus(units, opts)`,
--- `carbs(grams, {absorption, at})`, `override(name, {duration})`, `cancel_override(opts)`) or
--- `true`/`false` for the toggles. The same safety applies as for `bolus`: the profile's
--- limits (the hourly totals count 1.0 and 2.0 sends together), duplicate window, minimum
--- interval, dry run unless `remote = "live"`, the terminal question in the REPL, and the audit
--- log; toggles need `toggles = ["closed_loop", "autobolus"]`. Options: `notify` (default
--- true: ask the site to push to Loop), `fallback` ("v1" or false, default the profile's
--- `remote_fallback`), `notes` and `wait` (used only on fallback to 1.0). Returns a handle
--- (state "pending", or "dry_run"). A site without Remote 2.0 (every released Nightscout) gives
--- `nil, err` with `err.code == "unsupported"` ("remote commands 2.0 not supported by this
--- site") unless fallback is allowed: then the command goes through 1.0 and `cmd.via == "v1"`,
--- `cmd.fallback` says why. Refusals are as for `bolus` (`err.code == "refused"`, `err.reason`).
--- ```lua
--- local cmd, err = home:remote_command("carbs", 20, { absorption = 3 })
--- if cmd then cmd:wait { timeout = "2m" } print(cmd.state, cmd.message) end
--- ```
---@param kind "bolus"|"carbs"|"override"|"cancel_override"|"closed_loop"|"autobolus"
---@param ... any the command's arguments, then options
---@return nightscout.RemoteCommand|nil cmd
---@return table|nil err
function Client:remote_command(kind, ...) end

--- Lists the site's Remote 2.0 commands, newest first, as handles (`:wait()`, `:status()` work).
--- Context: task only (waits).
--- Notes: `since` (a time, or a duration back from now such as "10m" or "24h"; default 24 h
--- ago), `state` ("pending", "in_progress", "success", "error"),
--- `count` (default 50, at most 1000). A site without 2.0 gives `err.code == "unsupported"`.
--- ```lua
--- for _, c in ipairs(assert(home:remote_commands { state = "pending" })) do print(c.id, c.command) end
--- ```
---@param opts? {since?: number|string, state?: string, count?: integer}
---@return nightscout.RemoteCommand[]|nil commands
---@return table|nil err
function Client:remote_commands(opts) end
