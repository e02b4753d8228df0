---@meta http
--- Plain HTTP(S) requests to any server, for services Lookout has no client for.
---
--- Requests look synchronous but only the calling task waits; other tasks and timers keep
--- running. Any status is an answer: a 404 or 500 comes back as `resp` with `resp.status`.
--- Failures to get an answer return `nil, err` with `err.code`: "invalid_url", "timeout",
--- "network" (refused, reset, DNS, TLS), "redirect" (more than 5 or a loop), "too_large"
--- (body over `max_size`), "limit" (too many requests in flight, see below), "memory" (the
--- bodies of the script's requests in flight over its memory limit), "cancelled" or "refused"
--- (a Loop remote-command endpoint, or the status server of the `serve` running the script, on
--- any loopback spelling, also after a redirect); `err.retryable` says whether trying later may help.
---
--- A script runs at most 32 requests at once (`[limits] requests_in_flight`,
--- `--requests-in-flight`; shared with the service clients): the next ones wait for a slot in
--- order, and a request's `timeout` counts from when it starts; when 8 times as many already
--- wait, the call returns `nil, err` with `err.code == "limit"` at once.
--- Messages never include credentials, query strings or header values.
---@class httplib
local http = {}

---@class http.response
---@field status integer HTTP status code (non-2xx included)
---@field headers table<string, string> lower-case names; repeated headers joined with ", "
---@field body string the body, byte for byte
---@field json any the decoded body when `content-type` is JSON (`application/json`, `…+json`); else nil
---@field json_error string|nil why a JSON body could not be decoded (then `json` is nil)

---@class http.options
---@field url string http:// or https:// URL (required for `http.request`)
---@field method? string default "GET"
---@field headers? table<string, string|number|(string|number)[]> a list sends the header once per item
---@field query? table<string, string|number|boolean|(string|number|boolean)[]> appended to the URL, percent-encoded, sorted by name
---@field body? string|table a string is sent as it is; a table is sent as a form (application/x-www-form-urlencoded)
---@field json? any sent as `json.encode(value)` with content-type application/json (unless a header sets one)
---@field timeout? number|string for the whole exchange, body included: seconds or "30s", "2m" (default 30 s; at most 1d)
---@field max_size? integer|string largest body accepted: bytes or "512KB", "10MB" (default 10 MiB, at most 1 GiB; units are powers of 1024)
---@field follow_redirects? boolean follow 3xx answers, at most 5 (default true). On a redirect to another origin (scheme, host or port) only `accept`, `accept-language`, `cache-control`, `content-language`, `content-length`, `content-type`, `pragma` and `user-agent` are sent on: every other header (`authorization`, `cookie`, `api-secret`, `x-api-key`, …) is dropped

--- Sends an HTTP request and waits for the whole answer.
--- Context: task only (waits).
--- Notes: `body` and `json` cannot both be given. Unknown option names and wrong types raise.
--- Integers in `json` stay exact (int64). The response body is read up to `max_size`; beyond it
--- the request stops with `err.code == "too_large"`.
--- ```lua
--- local resp = assert(http.request { url = "https://example.org/api", query = { q = "x" } })
--- if resp.status == 200 then print(resp.json.name) end
--- ```
---@param opts http.options
---@return http.response|nil resp
---@return table|nil err
function http.request(opts) end

--- GET a URL.
--- Context: task only (waits).
--- Notes: `opts` takes the options of `http.request` except `url` and `method`.
---@param url string
---@param opts? http.options
---@return http.response|nil resp
---@return table|nil err
function http.get(url, opts) end

--- POST to a URL: the second argument is the body (a string) or options.
--- Context: task only (waits).
--- Notes: `http.post(url, {json = t})` sends JSON; `http.post(url, {body = {a = 1}})` sends a form.
---@param url string
---@param body_or_opts? string|http.options
---@return http.response|nil resp
---@return table|nil err
function http.post(url, body_or_opts) end

--- PUT to a URL: the second argument is the body (a string) or options.
--- Context: task only (waits).
---@param url string
---@param body_or_opts? string|http.options
---@return http.response|nil resp
---@return table|nil err
function http.put(url, body_or_opts) end

--- DELETE a URL.
--- Context: task only (waits).
---@param url string
---@param opts? http.options
---@return http.response|nil resp
---@return table|nil err
function http.delete(url, opts) end

return http
