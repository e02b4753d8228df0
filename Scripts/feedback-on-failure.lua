--[[ feedback-on-failure.lua — scripts that keep failing become a bug report

Run beside your other scripts under `lookout serve`. Every `every` (5 minutes) it reads serve's
health (`health.serve()`: the status serve writes into the state folder), and when a script has failed `failures` times
(errors plus crash restarts) within `within`, it files a Northlight bug report for your project:
which script, its state, how often it failed and its last error in plain words — with anything
that looks like a secret (tokens, keys, passwords, credentials in URLs) removed. A script is
reported at most once per `cooldown` (a day), and what was reported is kept in the store, so a
restart does not file it again. When Northlight cannot be reached the report waits in the
outbox (`lookout outbox`).

Needs: `lookout serve` and a [northlight.default] profile (`api_key_env` or `api_key_file`).
Settings, e.g. [scripts."feedback-on-failure.lua".settings]
  failures = 3   within = "1h"   every = "5m"
  cooldown = "24h"   profile = ""   (a [northlight.NAME] profile; "" is the default one)
  (`status_url` is still accepted and ignored: scripts cannot reach the status server.)
]]

local feedback = require "feedback"
local health = require "health"
local config = require "config"
local store = require "store"

local s = config.settings {
  status_url = "http://127.0.0.1:8765", failures = 3, within = "1h", every = "5m", cooldown = "24h", profile = "",
}
local fb = assert(feedback.client(s.profile ~= "" and s.profile or nil))
local me = require("script").name

local function seconds(text)
  local n, unit = tostring(text):match("^(%d+)([smhd]?)$")
  assert(n, "a duration such as \"1h\" expected, got " .. tostring(text))
  return tonumber(n) * ({ [""] = 1, s = 1, m = 60, h = 3600, d = 86400 })[unit]
end
local window, cooldown = seconds(s.within), seconds(s.cooldown)

--- The text with anything secret-looking removed.
local function redact(text)
  if not text then return "(none)" end
  text = text:gsub("(%a[%w+.-]*://)[^/@%s]+@", "%1‹redacted›@")                  -- user:pass@ in URLs
  text = text:gsub("([?&][%w_]*[Tt][Oo][Kk][Ee][Nn]=)[^&%s]+", "%1‹redacted›")    -- ?token=…
  text = text:gsub("([?&][%w_]*[Ss][Ee][Cc][Rr][Ee][Tt]=)[^&%s]+", "%1‹redacted›")
  text = text:gsub("[Bb]earer%s+[%w._~+/=-]+", "Bearer ‹redacted›")
  text = text:gsub("eyJ[%w_-]+%.[%w_-]+%.[%w_-]*", "‹redacted›")                   -- JWTs
  text = text:gsub("%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x+", "‹redacted›") -- long hex keys
  return text
end

local function check()
  local status, err = health.serve()
  if not status then return log.warn("cannot read serve's status:", err.message) end
  local now = os.time()
  for _, e in ipairs(status.entries or {}) do
    if e.kind == "script" and e.name ~= me then
      local key = "seen:" .. e.name
      local seen = store.get(key, {})
      local count = (e.errors or 0) + (e.restarts or 0)
      seen[#seen + 1] = { t = now, n = count }
      while #seen > 1 and seen[1].t < now - window do table.remove(seen, 1) end
      store.set(key, seen)
      local failed = count - seen[1].n
      if #seen == 1 and count >= s.failures then failed = count end
      local filed = store.get("filed:" .. e.name, 0)
      if failed >= s.failures and now - filed >= cooldown then
        local outcome, ferr = fb:bug {
          title = ("Lookout script %s failed %d times within %s"):format(e.name, failed, s.within),
          description = table.concat({
            ("Script: %s (state %s, %d restarts, %d errors since its last start)"):format(
              e.name, e.state or "?", e.restarts or 0, e.errors or 0),
            "Last error: " .. redact(e.last_error),
            e.last_error_at and ("At: " .. e.last_error_at) or nil,
          }, "\n"),
          severity = (e.state == "crashed" or e.state == "stopped") and "high" or "medium",
          steps = "Runs under lookout serve; reported by feedback-on-failure.lua from serve's health.",
        }
        if outcome then
          store.set("filed:" .. e.name, now)
          log.notice(("reported %s (%s)"):format(e.name, outcome.state))
        else
          log.warn("cannot file the report for " .. e.name .. ":", ferr.message)
        end
      end
    end
  end
end

check()
timer.every(s.every, check)
