---@meta feedback
--- Northlight feedback: submit feedback and bug reports, vote on feedback, read the public
--- board and roadmap of a Northlight project.
---
--- `feedback.client "app"` uses `[northlight.app]` in config.toml: `api_key_env` (or
--- `api_key_file`) names the project's API key, `url` the API (default
--- "https://northlight.app/api/v1"; plain http only to 127.0.0.1/localhost), and optionally
--- `email` (sent with submissions), `user_id` (votes), `timeout` and `cache_ttl` (how long the
--- board and roadmap are cached, default "5m"). Scripts never see the key.
---
--- Submissions carry device information collected here: machine model, OS and version, Lookout's
--- version, locale, terminal size; bug reports add free memory, battery level and network type
--- where the OS tells. Nothing personal (no host name, user name or addresses).
---
--- Methods wait without blocking other tasks and return `nil, err` on failure, with
--- `err.service == "northlight"` and `err.code` one of "config", "invalid_input" (`err.field`
--- names the field: title, description, email, severity, user_identifier, feedback_id, status),
--- "invalid_api_key", "rate_limited" (`err.retry_after` seconds), "feedback_limit" (the free
--- tier's 5 items), "server" (`err.status`), "network" or "invalid_response". Wrong argument
--- types raise. A submission that fails for a passing reason (network, 429, 5xx) is not an
--- error: it is stored in the outbox (`lookout outbox`) and sent later.
---@class feedbacklib
local feedback = {}

--- A client of a Northlight project: a profile name, or nil for `[northlight.default]` (or the
--- only `[northlight.*]` profile).
---@param profile? string
---@return feedback.Client|nil client
---@return table|nil err `code == "config"` for a missing or wrong profile
function feedback.client(profile) end

--- The bug severities: "low", "medium", "high", "critical".
---@return string[]
function feedback.severities() end

---@class feedback.Client
local Client = {}

---@class feedback.Outcome
---@field state "sent"|"queued"
---@field id string|nil the server's id (sent)
---@field outbox_id string|nil the outbox item (queued)
---@field error string|nil why it could not be sent now (queued)
---@field retry_after number|nil the server's wait in seconds (queued after a 429)

--- Submits feedback. `title` (≤ 255 characters) and `description` are required; `email`
--- overrides the profile's.
--- Context: task only (waits).
---@param opts {title: string, description: string, category?: string, email?: string}
---@return feedback.Outcome|nil outcome
---@return table|nil err
function Client:submit(opts) end

--- Reports a bug; `severity` is "low", "medium" (default), "high" or "critical"; `steps` the
--- steps to reproduce.
--- Context: task only (waits).
---@param opts {title: string, description: string, severity?: string, steps?: string, email?: string}
---@return feedback.Outcome|nil outcome
---@return table|nil err
function Client:bug(opts) end

--- Votes for a feedback item as `user` (default: the profile's `user_id`); returns the item's
--- vote count. A second vote by the same user does not count again.
--- Context: task only (waits).
---@param id string the feedback id (from `board`)
---@param user? string
---@return integer|nil vote_count
---@return table|nil err
function Client:vote(id, user) end

---@class feedback.Item
---@field id string
---@field title string
---@field description string
---@field status string "approved", "suggested", …
---@field category string|nil
---@field vote_count integer
---@field created_at string ISO 8601

--- The public board, most voted first, optionally only some statuses. Cached for `cache_ttl`
--- unless `refresh`.
--- Context: task only (waits).
---@param opts? {status?: string|string[], refresh?: boolean} status: "approved,suggested" or {"approved", "suggested"}
---@return feedback.Item[]|nil items
---@return table|nil err
function Client:board(opts) end

---@class feedback.RoadmapItem
---@field id string
---@field feature {title: string, description: string}
---@field position integer 1 first
---@field estimated_date string|nil e.g. "2024-Q2"

--- The public roadmap in order. Cached for `cache_ttl` unless `refresh`.
--- Context: task only (waits).
---@param opts? {refresh?: boolean}
---@return feedback.RoadmapItem[]|nil items
---@return table|nil err
function Client:roadmap(opts) end

return feedback
