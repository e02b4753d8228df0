---@meta config
--- Read-only access to the host configuration (`~/.config/lookout/config.toml`).
---
--- Scripts see settings, never secrets: keys that name where a secret lives (`…_env`, `…_file`)
--- are left out, and secrets themselves are never in the file.
---@class configlib
---@field file string path of the config file (it may not exist)
---@field binding? config.Binding the profile this copy of the script runs for (`[serve.bind]`); nil when not bound
local config = {}

--- One binding of a script to a profile: `serve` runs a bound script once per matching profile
--- (`[serve.bind] "low-alert.lua" = ["nightscout.*"]`), each copy with its own state, store keys,
--- alerts (`low.child1`, titled "Low (child1)") and, in a cluster, its own lease.
---@class config.Binding
---@field service "nightscout"|"signalk"
---@field profile string the profile's name; also the copy's `site` (Nightscout) or `boat` (Signal K) setting

--- The value at a dotted path, e.g. `config.get("limits.memory")` or
--- `config.get("nightscout.home.url")`; nil when absent.
--- Context: anywhere.
---@param path string
---@return any value
function config.get(path) end

--- Names of the profiles configured for a service, sorted.
--- Context: anywhere.
---@param service string "nightscout", "signalk", "northlight" or "garmin"
---@return string[] names
function config.profiles(service) end

--- The script's settings: `defaults` overlaid with `[scripts."NAME.lua".settings]` from the
--- config file, so a ready-made script is tuned without editing it. A bound copy
--- (`config.binding`) gets its profile as `site` or `boat` when the defaults have that key.
--- Context: anywhere.
--- Notes: raises when the config names a setting the defaults do not have, or gives a value of
--- another kind (a string where the default is a number), naming the config line's key.
--- ```lua
--- -- config.toml: [scripts."low-alert.lua".settings]  low = 65
--- local settings = config.settings { low = 70, urgent_low = 55, site = "home" }
--- ```
---@param defaults table<string, any>
---@return table<string, any> settings
function config.settings(defaults) end

return config
