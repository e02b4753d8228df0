---@meta signalk
--- Signal K servers: a boat's live data stream, its values, and PUT requests.
---
--- `signalk.connect` opens a boat: a WebSocket stream that runs in the background (reconnecting
--- with backoff), a local store of every value received, and a REST client for the rest. The
--- boat stays open until `boat:close()`, the end of a `local boat <close> = …` scope, or the end
--- of the script. Using a closed boat raises "attempt to use a closed signalk boat", except
--- `boat:state()`, which answers "closed".
---
--- Methods wait without blocking other tasks and return `nil, err` on failure, with
--- `err.service == "signalk"` and `err.code` one of "config", "network", "timeout", "closed",
--- "http" (`err.status`), "auth", "request_failed" (`err.status`, `err.state`),
--- "invalid_response", "invalid", "access", "rate_limited", "discovery" or "cancelled"; `err.retryable` says
--- whether trying later may help. Wrong argument types raise.
---
--- Values keep Signal K's SI units (radians, m/s, kelvin; see `signalk.units`) and the JSON
--- shape the server sent: objects are tables, arrays are lists, and JSON null is `json.null`.
--- Paths are relative to the own vessel (`navigation.speedOverGround`) or absolute
--- (`vessels.urn:mrn:imo:mmsi:230099999.navigation.position`).
---@class signalklib
local signalk = {}

---@class signalk.connect_options
---@field url string the server: "http://host:3000", "ws://host:3000/signalk/v1/stream", https or wss (required)
---@field token? string an access token the script holds itself (literal; `token_env`/`token_file` raise: they belong in a profile)
---@field subscribe? "self"|"all"|"none"|signalk.subscriptions what the stream carries (default "self"); a list of subscriptions means "none" plus these
---@field timeout? number|string how long to wait for the server's hello: seconds or "10s" (default 10 s; 0s to 1d)

--- Opens a boat: a config profile name (`[signalk.NAME]` in config.toml) or options.
--- Context: task only (waits for the server's hello).
--- Notes: the profile has `url`, optionally `token_env`/`token_file`, `subscribe = "self"`
--- ("self", "all" or "none"), `timeout = "10s"` and `access = {description = "…", wait = "5m",
--- permissions = "readwrite"}`, the opt-in to access requests: a token the server refuses (no
--- token, expired or revoked; HTTP 401 on REST or at the WebSocket upgrade) is then requested
--- from the server, waited for up to `wait`, stored for the profile (0600, never visible to
--- scripts) and the connection or call tried again. Without the opt-in such a refusal is
--- `nil, err` with `err.code == "auth"` saying how to get a token (`lookout signalk token
--- request NAME`). A profile's stored token is used before its `token_env`/`token_file`.
--- A connection without a token to a server that wants one fails at once with `"auth"` (not
--- with the hello and then silence). Returns `nil, err` when the profile is missing
--- (`err.code == "config"`), when the first connection attempt fails (`"network"`: refused,
--- unreachable, or no hello), or when no hello came within the timeout (`"timeout"`). After
--- that, a lost connection is re-established in the background and subscriptions are re-sent.
--- A URL that is not ws, wss, http or https, or an unknown option, raises.
--- ```lua
--- local boat <close> = assert(signalk.connect "boat")
--- local sim = assert(signalk.connect { url = "http://127.0.0.1:3000", subscribe = "all" })
--- ```
---@param profile_or_opts string|signalk.connect_options
---@return signalk.Boat|nil boat
---@return table|nil err
function signalk.connect(profile_or_opts) end

---@class signalk.Service
---@field name string the instance name
---@field type string e.g. "_signalk-ws._tcp"
---@field host string
---@field port integer
---@field url? string the server URL to pass to `signalk.connect{url=…}`
---@field self? string the vessel URN from the TXT record
---@field roles string[] e.g. { "master", "main" }

--- Looks for Signal K servers on the local network with mDNS (DNS-SD).
--- Context: task only (waits `timeout`).
--- Notes: many boats have mDNS off; let users enter the address too. Returns `nil, err`
--- (`err.code == "discovery"`) when no network interface can be used.
--- ```lua
--- for _, s in ipairs(assert(signalk.discover { timeout = 2 })) do print(s.name, s.url) end
--- ```
---@param opts? {timeout?: number|string} how long to listen (default 3 s, at most 60 s)
---@return signalk.Service[]|nil services
---@return table|nil err
function signalk.discover(opts) end

--- Unit conversions (Signal K values are SI).
--- Context: anywhere.
signalk.units = {}

--- Radians to degrees.
--- Context: anywhere.
--- ```lua
--- print(signalk.units.rad_to_deg(assert(boat:get "navigation.headingTrue")))
--- ```
---@param radians number
---@return number degrees
function signalk.units.rad_to_deg(radians) end

--- Degrees to radians.
--- Context: anywhere.
---@param degrees number
---@return number radians
function signalk.units.deg_to_rad(degrees) end

--- Metres per second to knots.
--- Context: anywhere.
---@param ms number
---@return number knots
function signalk.units.ms_to_knots(ms) end

--- Knots to metres per second.
--- Context: anywhere.
---@param knots number
---@return number ms
function signalk.units.knots_to_ms(knots) end

--- Kelvin to degrees Celsius.
--- Context: anywhere.
---@param kelvin number
---@return number celsius
function signalk.units.k_to_c(kelvin) end

--- Degrees Celsius to kelvin.
--- Context: anywhere.
---@param celsius number
---@return number kelvin
function signalk.units.c_to_k(celsius) end

--- A value as people read it, by its path's metadata: the `displayUnits` the server resolved
--- (signalk-server 2.x: knots, degrees, °C … as its unit preferences say, with the format's
--- decimals), else from the SI `units` to the usual unit (m/s → kn, rad → °, K → °C, Pa → hPa,
--- ratio → %). `meta` is a path's metadata (`boat:meta(path)`, `d.meta` of a meta item) or just
--- its SI units ("m/s"). Returns nil when no display unit is known.
--- Context: anywhere.
--- ```lua
--- local m = assert(boat:meta "navigation.speedOverGround")
--- print(signalk.units.display(assert(boat:get "navigation.speedOverGround"), m))  -- 6.2 kn  6.2  kn
--- print(signalk.units.display(290.15, "K"))                                        -- 17.0 °C  17.0  °C
--- ```
---@param value number an SI value
---@param meta table|string the path's metadata, or its SI units
---@return string|nil text e.g. "6.2 kn"
---@return number|nil shown the converted number
---@return string|nil symbol e.g. "kn"
function signalk.units.display(value, meta) end

---@class signalk.Boat
local Boat = {}

--- A value: from the local store when the stream has delivered it, else with a REST GET.
--- Context: task only (may wait).
--- Notes: `path` is relative to the own vessel or absolute (`vessels.…`). A REST leaf answer
--- (`{value=…, timestamp=…, $source=…}`) is reduced to its value; a branch (`"navigation"`) is
--- returned whole. An unknown path returns `nil, err` (`err.code == "http"`, `err.status == 404`).
--- ```lua
--- local sog = assert(boat:get "navigation.speedOverGround")
--- print(("%.1f kn"):format(signalk.units.ms_to_knots(sog)))
--- ```
---@param path string
---@return any|nil value
---@return table|nil err
function Boat:get(path) end

--- The metadata of a path of the own vessel, as the server keeps it: `units` (SI: "m/s", "K",
--- "rad" …), `description`, and what people set (`displayName`, `zones`, `displayUnits` …).
--- Context: task only (waits).
--- Notes: a REST GET of `…/<path>/meta`; a path without metadata returns `nil, err`
--- (`err.code == "http"`, `err.status == 404`).
--- ```lua
--- local m = assert(boat:meta "environment.water.temperature")
--- print(m.units, m.displayName)   -- K   Sea
--- ```
---@param path string
---@return table|nil meta
---@return table|nil err
function Boat:meta(path) end

---@class signalk.subscription
---@field path string a path pattern, e.g. "navigation.*"
---@field period? integer milliseconds between updates
---@field minPeriod? integer milliseconds at least between updates ("instant")
---@field policy? "instant"|"fixed"
---@field format? "delta"|"full"

---@alias signalk.subscriptions (signalk.subscription|string)[]|{context?: string}

--- Adds stream subscriptions (rows are path strings or tables); `context` defaults to
--- "vessels.self" ("vessels.*" for AIS targets).
--- Context: task only (waits until the stream has taken them).
--- Notes: a row for a path already subscribed with other options replaces it. Subscriptions
--- survive reconnects. Connect with `subscribe = "none"` to receive only what you subscribe to.
--- ```lua
--- boat:subscribe { { path = "navigation.*", period = 1000, policy = "fixed" }, "environment.depth.*" }
--- boat:subscribe { "navigation.position", context = "vessels.*" }
--- ```
---@param rows signalk.subscriptions
---@return true
function Boat:subscribe(rows) end

--- Removes subscriptions: all of them (no argument or "*"), or the rows for these paths.
--- Context: task only (waits until the stream has taken it).
--- Notes: signalk-server only accepts "unsubscribe everything", so the stream sends that and
--- subscribes the remaining rows again; values they replay are not delivered twice. Unsubscribing
--- everything also ends a `subscribe = "self"|"all"` stream.
--- ```lua
--- boat:unsubscribe "navigation.*"
--- boat:unsubscribe { "navigation.position", context = "vessels.*" }
--- boat:unsubscribe()
--- ```
---@param paths? string|string[]|{context?: string}
---@return true
function Boat:unsubscribe(paths) end

---@class signalk.send_delta_options
---@field path? string one value's path (with `value`)
---@field value? any its value (`json.null` clears it)
---@field values? {path: string, value: any}[]|table<string, any> several values: a list, or path = value
---@field context? string default the own vessel
---@field source? string the `$source` to publish under (default: the server names the connection)
---@field timestamp? number|string epoch milliseconds or ISO-8601 (default now)

--- Publishes values as a delta on the stream, as a data provider does.
--- Context: task only.
--- Notes: the server takes it only from a connection that may write: security off, or a
--- `readwrite`/`admin` token; it ignores it silently otherwise (read it back with `get` when it
--- matters). Returns `nil, err` (`err.code == "network"`) when the stream is not connected; nothing
--- is queued for later. Custom paths should live under a prefix of their own.
--- ```lua
--- boat:send_delta { path = "environment.lookout.bg", value = 5.4, source = "lookout.nightscout" }
--- boat:send_delta { values = { ["environment.lookout.bg"] = 5.4, ["environment.lookout.trend"] = "Flat" } }
--- ```
---@param opts signalk.send_delta_options
---@return true|nil ok
---@return table|nil err
function Boat:send_delta(opts) end

---@class signalk.Delta
---@field context string the absolute context, e.g. "vessels.urn:mrn:imo:mmsi:230099999"
---@field path string relative to the context
---@field value any the new value (`json.null` when cleared); absent in a meta item
---@field meta? table in a meta item (only with `meta = true`): the path's metadata as the server
---sent it (`units`, `description`, `displayName`, `zones`, `displayUnits` …), instead of `value`
---@field source? string the source reference, e.g. "nmea0183.GP"
---@field timestamp? string RFC 3339 UTC, e.g. "2026-05-01T10:00:00.000Z"

--- A loop over values as they arrive (one `d` per changed value), from the moment of the call.
--- Context: task only (the loop waits when nothing is buffered).
--- Notes: `opts.paths` are path patterns (`*` matches anything, dots included; default: all);
--- `opts.context` is a context pattern ("vessels.self" matches the own vessel; default: all).
--- Values wait in a buffer of `opts.buffer` values (default 4096); when the loop is slower than
--- the stream the oldest are dropped and a warning is written once. Leaving the loop (`break`,
--- `return`, an error, or the task being cancelled) stops it at once; the loop ends by itself
--- when the boat is closed. Only what the stream carries is seen: see `subscribe`.
--- With `opts.meta = true` the loop also gets the paths' metadata as the server sends it (before
--- a path's first value, and when someone changes it): items with `d.meta` and no `d.value`.
--- ```lua
--- for d in boat:deltas { paths = { "navigation.*" } } do
---   print(d.path, d.value, d.timestamp)
---   if d.path == "navigation.speedOverGround" then break end
--- end
--- for d in boat:deltas { paths = { "environment.*" }, meta = true } do
---   if d.meta then print(d.path, d.meta.units, d.meta.displayName) end
--- end
--- ```
---@param opts? {paths?: string[], context?: string, buffer?: integer, meta?: boolean}
---@return fun(): signalk.Delta|nil iterator
function Boat:deltas(opts) end

---@class signalk.Handler
local Handler = {}
--- Stops the handler (values not yet handled are dropped); false if it was already stopped.
---@return boolean
function Handler:stop() end
--- Whether the handler still receives values.
---@return boolean
function Handler:running() end

--- Calls `fn(d)` for each value whose path matches `pattern`, each call as its own task.
--- Context: anywhere (returns at once).
--- Notes: built on a `deltas` loop (buffer 4096 values, the oldest dropped when full); each call
--- is a task like one `task.spawn` starts (counted in its limit), named after the pattern in error
--- reports. The handler keeps the script running until
--- `handle:stop()`, the end of a `<close>` scope holding the handle, or `boat:close()`. The host
--- anchors what it runs: a boat whose `<close>` scope ends while handlers run stays open until
--- the last of them stops (so `local boat <close> = …` then `boat:on(…)` keeps working).
--- An error in `fn` is reported like any task error and does not stop the handler.
--- `opts.meta = true` calls `fn` for the paths' metadata too (`d.meta`, no `d.value`; see `deltas`).
--- ```lua
--- local h = boat:on("environment.depth.belowTransducer", function(d)
---   if d.value < 2 then log.warn("shallow: " .. d.value .. " m") end
--- end)
--- sleep "10m"
--- h:stop()
--- boat:on("environment.*", function(d) if d.meta then print(d.path, d.meta.displayName) end end, { meta = true })
--- ```
---@param pattern string a path pattern
---@param fn fun(d: signalk.Delta)
---@param opts? {meta?: boolean}
---@return signalk.Handler
function Boat:on(pattern, fn, opts) end

---@class signalk.PutResult
---@field state string "COMPLETED"
---@field statusCode integer e.g. 200
---@field message? string
---@field requestId? string
---@field href? string

--- Asks the server to set a value (REST PUT on the own vessel), waiting for the outcome
--- (pending requests are polled).
--- Context: task only (may wait).
--- Notes: returns `nil, err` when the server or device refuses (`err.code == "request_failed"`,
--- `err.status` 405 = nothing can set that path, 400 = rejected, 502/504 = device failed), or
--- `"auth"` without permission. `value` may be any JSON-like value; `json.null` sends null.
--- ```lua
--- local r, err = boat:put("steering.autopilot.target.headingTrue", signalk.units.deg_to_rad(270))
--- if not r then log.warn(tostring(err)) end
--- ```
---@param path string
---@param value any
---@return signalk.PutResult|nil result
---@return table|nil err
function Boat:put(path, value) end

---@class signalk.request_access_options
---@field description? string what the server's administrator sees (1 to 200 characters; default the profile's access.description)
---@field permissions? "readonly"|"readwrite" what to ask for (default the profile's access.permissions, else the administrator chooses)
---@field wait? number|string how long to wait for the decision: seconds or "5m" (default the profile's access.wait, else 0: do not wait; at most 1h)

--- Asks the server for a device token for this boat's profile (contract §6: POST
--- /signalk/v1/access/requests, then polling), unless a valid one is stored, and waits up to
--- `opts.wait` for the administrator. Returns the token's state then: "valid" (approved and
--- stored), "denied", or "pending" (the request goes on in the background; a later connect or
--- call uses the token once approved). The token is never given to the script.
--- Context: task only (may wait).
--- Notes: only for profile connections (`signalk.connect "NAME"`; `nil, err` with
--- `err.code == "config"` for `connect{url=…}`). One request runs per profile for the whole
--- process; a new one is sent at most once a minute (`err.code == "rate_limited"`), and none
--- after a denial (`err.code == "auth"`) until a person runs `lookout signalk token request NAME`.
--- ```lua
--- local state, err = boat:request_access { description = "anchor watch on the chart table", wait = "5m" }
--- if state ~= "valid" then log.warn("no token yet: " .. tostring(state or err)) end
--- ```
---@param opts? signalk.request_access_options
---@return "valid"|"pending"|"denied"|nil state
---@return table|nil err
function Boat:request_access(opts) end

--- The state of the profile's token, never the token: "none" (no token and no request; also
--- always for `connect{url=…}`), "pending" (a request waits for the administrator), "valid" (a
--- token is stored or configured and the server has not refused it), "denied" or "expired"
--- (past its `exp`, or refused by the server).
--- Context: task only.
--- ```lua
--- if boat:token_state() == "expired" then boat:request_access { wait = "1m" } end
--- ```
---@return "none"|"pending"|"valid"|"denied"|"expired" state
function Boat:token_state() end

--- The own vessel's context from the hello (e.g. "vessels.urn:mrn:imo:mmsi:230099999").
--- Context: anywhere.
---@return string|nil context
function Boat:self() end

--- The server's hello: `{name=…, version=…, self=…, roles={…}, serverStartId=…, timestamp=…}`.
--- Context: anywhere.
---@return table|nil hello
function Boat:hello() end

--- The connection state: "connecting", "connected", "reconnecting" or "closed" (also after
--- `boat:close()`, where every other method raises), and, once the stream has closed a
--- connection because the server broke a bound, the last such error (`err.code == "protocol"`):
--- a message over 1 MiB (its fragments together), or a fragmented message not finished within
--- the connection's `timeout` (default 10 s). The stream reconnects after it; the error stays
--- until the boat is closed.
--- Context: anywhere.
---@return string state
---@return table|nil err
function Boat:state() end

--- Stops the stream; open `deltas` loops and `on` handlers end after their buffered values.
--- Closing twice is fine.
--- Context: anywhere.
--- Notes: a `<close>` variable closes the boat at the end of its scope, or, while `on` handlers
--- run, when the last of them stops.
--- ```lua
--- local boat <close> = assert(signalk.connect "boat")   -- closed at the end of the scope
--- ```
function Boat:close() end

return signalk
