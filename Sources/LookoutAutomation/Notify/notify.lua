---@meta notify
--- Messages to people through channels configured in config.toml as `[notify.NAME]` profiles:
---
--- | type | settings | sends |
--- | --- | --- | --- |
--- | "log" | | a log line (urgent: critical, warning: warning, info: notice) |
--- | "webhook" | `url` (or `url_env`/`url_file` when the URL is itself a secret, as Slack's and Discord's are), optional `token_env`/`token_file` (Bearer) | `POST url`, JSON `{id, channel, title, message, severity, kind, time, alert_id, source, episode, ack_url}` |
--- | "ntfy" | `topic`, `url` (default https://ntfy.sh), optional `token_*` | `POST url/topic`, text body, `Title`, `Priority` (5/4/3), `Tags` headers |
--- | "pushover" | `token_*` (app), `user_key_*`, `url` (default https://api.pushover.net) | form `POST /1/messages.json`; urgent = priority 2 (repeats until acknowledged in the app) |
--- | "telegram" | `token_*` (bot), `chat_id`, `url` (default https://api.telegram.org) | `POST /bot<token>/sendMessage` JSON `{chat_id, text}` |
--- | "nightscout" | `site` (a `[nightscout.NAME]` profile) | a treatment `eventType = "Announcement"` through the site's upload outbox |
--- | "signalk" | `server` (a `[signalk.NAME]` profile), `path` (default "notifications.lookout") | a delta `path.<alert_id>` = `{state, method, message}` (urgent alarm, warning warn, info alert), confirmed by the server's echo |
---
--- Every profile may set `dry_run = true`: the message is logged, never sent. Messages go through a
--- durable queue (`lookout outbox` shows it): stored before sending, sent once (an id queued twice
--- is stored once; a sender claims an item before sending it), retried with backoff (2 s doubling
--- to 5 min) on network errors, 408, 429 and 5xx; other refusals stay "failed". Secrets are read
--- when sending, never stored with the message and never shown in errors. Under `lookout test`
--- nothing is sent: a `notify` side effect is recorded.
---
--- A message about an alert episode (`alert_id` and `episode`, as the alert library sends them)
--- gets the episode's ack link when it is sent (ntfy: an "Acknowledge" action; Pushover: its URL;
--- Telegram: a button with `[serve] public_url`, else a line of text; webhook: `ack_url` in the
--- JSON). The host makes the link after the script's code ran; no script can read it.
---@class notifylib
local notify = {}

---@class notify.Message
---@field message string the text (required)
---@field title? string
---@field severity? "urgent"|"warning"|"info" default "info"
---@field alert_id? string the alert it is about (Signal K path leaf)
---@field episode? integer the alert's episode it is about: with `alert_id`, the host adds that episode's ack link when it sends (never visible to scripts)
---@field id? string a stable id: sending the same id twice delivers once (default: a new UUID)
---@field kind? string why: "firing", "stale", "repeat", "escalated", "resolved" (default "message")
---@field state? "normal"|"alert"|"warn"|"alarm"|"emergency" the Signal K state (default from severity)
---@field wait? boolean wait up to 5 s for the first attempt (default true); false returns once queued

---@class notify.Item
---@field id string
---@field channel string
---@field state "pending"|"sending"|"sent"|"failed"|"dry_run"|"recorded"
---@field attempts integer
---@field error? string the last failure
---@field status? integer its HTTP status
---@field next_attempt? integer epoch ms
---@field sent_at? integer epoch ms

--- Queues a message on channel `name` and tries to send it.
--- Context: task only (waits), except for dry-run channels and recorded runs.
--- Returns `nil, err` when the channel is not configured (`err.code == "config"`) or the service
--- refused the message for good (`err.code == "notify"`, `err.status`, `err.id`); a message that
--- will be retried returns its item with `state == "pending"`. Wrong types raise.
--- ```lua
--- assert(notify.send("phone", { title = "Boat", message = "anchor alarm", severity = "urgent" }))
--- ```
---@param name string
---@param msg notify.Message
---@return notify.Item|nil item
---@return table|nil err
function notify.send(name, msg) end

--- The configured channels: `{name, type, dry_run}` each ("invalid" type when misconfigured).
---@return {name: string, type: string, dry_run: boolean}[]
function notify.channels() end

return notify
