-- lookout._docs.stdlib: Lua's standard library in the help system: names link to the 5.4
-- manual. Part of lookout._docs (docs.lua); pure Lua 5.4.

local fmt = string.format

local MANUAL = "https://www.lua.org/manual/5.4/manual.html"
local D = {}

local STD_SECTIONS = {
  _G = "6.1", coroutine = "6.2", package = "6.3", string = "6.4", utf8 = "6.5",
  table = "6.6", math = "6.7", io = "6.8", os = "6.9", debug = "6.10",
}
local STD_NAMES = {}
for name in ([[
  assert collectgarbage dofile error getmetatable ipairs load loadfile next pairs pcall
  print rawequal rawget rawlen rawset require select setmetatable tonumber tostring type
  xpcall warn _G _VERSION
  coroutine.close coroutine.create coroutine.isyieldable coroutine.resume
  coroutine.running coroutine.status coroutine.wrap coroutine.yield
  package.config package.cpath package.loaded package.loadlib package.path
  package.preload package.searchers package.searchpath
  string.byte string.char string.dump string.find string.format string.gmatch
  string.gsub string.len string.lower string.match string.pack string.packsize
  string.rep string.reverse string.sub string.unpack string.upper
  utf8.char utf8.charpattern utf8.codepoint utf8.codes utf8.len utf8.offset
  table.concat table.insert table.move table.pack table.remove table.sort table.unpack
  math.abs math.ceil math.cos math.deg math.exp math.floor math.fmod math.huge
  math.log math.max math.maxinteger math.min math.mininteger math.modf math.pi
  math.rad math.random math.randomseed math.sin math.sqrt math.tan math.tointeger
  math.type math.ult math.acos math.asin math.atan
  io.close io.flush io.input io.lines io.open io.output io.popen io.read io.stderr
  io.stdin io.stdout io.tmpfile io.type io.write
  os.clock os.date os.difftime os.execute os.exit os.getenv os.remove os.rename
  os.setlocale os.time os.tmpname
  debug.debug debug.gethook debug.getinfo debug.getlocal debug.getmetatable
  debug.getregistry debug.getupvalue debug.getuservalue debug.sethook debug.setlocal
  debug.setmetatable debug.setupvalue debug.setuservalue debug.traceback
  debug.upvalueid debug.upvaluejoin
]]):gmatch("%S+") do
  STD_NAMES[name] = true
end

--- The Lua 5.4 manual address for a standard library name ("print", "string.format",
-- "string"), or nil.
function D.manual_url(name)
  if STD_NAMES[name] then return MANUAL .. "#pdf-" .. name end
  if STD_SECTIONS[name] then return MANUAL .. "#" .. STD_SECTIONS[name] end
  return nil
end

local function std_help(name)
  if STD_SECTIONS[name] and not STD_NAMES[name] then
    return fmt("%s: Lua standard library (manual §%s)\n%s", name, STD_SECTIONS[name],
               D.manual_url(name))
  end
  return fmt("%s: Lua standard library\n%s", name, D.manual_url(name))
end

return { manual_url = D.manual_url, help = std_help, names = STD_NAMES }
