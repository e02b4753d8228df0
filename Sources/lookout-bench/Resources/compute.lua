-- P8 (lookout-bench): pure Lua compute, run the same way under `lookout run` and stock `lua5.4`.
-- Recursion, a sort of 200,000 numbers and string building; prints "p8 <checksum> <cpu seconds>"
-- where the seconds are os.clock() around the work (start-up excluded).
local clock, concat, sort, format = os.clock, table.concat, table.sort, string.format
local start = clock()

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local checksum = fib(32)

local numbers, seed = {}, 42
for i = 1, 200000 do
  seed = (seed * 1103515245 + 12345) % 2147483648
  numbers[i] = seed
end
sort(numbers)
checksum = checksum + numbers[1] % 1000 + numbers[#numbers] % 1000

local parts = {}
for i = 1, 200000 do parts[#parts + 1] = format("%d:%x", i, i * 7) end
local text = concat(parts, ",")
local words = 0
for _ in text:gmatch("[^,]+") do words = words + 1 end
checksum = checksum + #text + words

print(format("p8 %d %.6f", checksum, clock() - start))
