-- A tour of Lookout's core: tasks that wait without blocking each other, timers, JSON and the
-- per-script store. Run it with:  lookout run Examples/tour.lua
local store = require "store"

print("Lookout tour: three tasks wait at once; the whole run takes about one second.")

-- Each task waits on its own; waiting never blocks the others.
local readings = {}
local sensors = { { name = "cgm", value = 112, delay = 0.3 }, { name = "wind", value = 14.2, delay = 0.6 },
                  { name = "heart", value = 61, delay = 0.9 } }
local tasks = {}
for i, s in ipairs(sensors) do
  tasks[i] = task.spawn(function()
    sleep(s.delay)                      -- looks synchronous; other tasks run meanwhile
    readings[s.name] = s.value
    return s.name
  end)
end

-- A timer keeps ticking while the tasks wait; the host keeps it alive until it is stopped.
local ticks = 0
local ticker = timer.every("200ms", function() ticks = ticks + 1 end)

local ok, results = task.all(tasks)
ticker:stop()
print(("all %d tasks done (%s), the timer ticked %d times meanwhile"):format(#tasks, tostring(ok), ticks))

-- JSON keeps integers exact and arrays as arrays.
local doc = json.encode({ readings = readings, big = math.maxinteger, empty = json.empty_array }, { sort_keys = true })
print("json: " .. doc)
assert(json.decode(doc).big == math.maxinteger)

-- The store keeps values between runs of this script.
local runs = store.update("runs", function(n) return (n or 0) + 1 end)
print(("this tour has run %d time(s) on this machine"):format(runs))
