---@meta config
--- Read-only access to the host configuration (`~/.config/lookout/config.toml`).
---
--- Scripts see settings, never secrets: keys that name where a secret lives (`…_env`, `…_file`)
--- are left out, and secrets themselves are never in the file.
---@class configlib
---@field file string path of the config file (it may not exist)
local config = {}

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

return config
