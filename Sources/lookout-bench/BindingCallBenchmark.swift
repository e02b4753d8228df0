import Foundation
import Lua

/// P1: the cost of calling a host function from a Lua loop, `for i = 1, N do s = f(s, i) end`,
/// for a Lua function, a plain `lua_CFunction` and a Swift binding through Lookout's trampoline.
///
/// The anchor is the plain C function. It is written in Swift as a `@convention(c)` function and
/// registered directly with `lua_pushcclosure` (no trampoline, no box): stack-notes §2 measured
/// that to cost the same as a function compiled from C. `math.max` from liblua (real C, gcc -O2)
/// is timed as well to confirm it.
struct BindingCallBenchmark: Benchmark {
    let id = "P1"
    let summary = "binding call: Lua function vs C lua_CFunction vs Swift binding (trampoline)"

    /// Most Swift/C ratio that passes.
    static let target = 1.2

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let n = settings.callCount
        let session = try await ScriptSession.start(name: "bench-p1.lua") { options in
            options.cpuLimit = 0  // 10M calls take longer than the default slice
            options.memoryLimit = 0
        }
        await session.runtime.withEngine { engine in
            LuaBenchmarkAnchors.pushCAdd(on: LuaStack(engine.L))
            engine.setGlobal("bench_c_add")
            engine.pushFunction("bench_swift_add") { call in
                let sum = try call.integer(1) &+ call.integer(2)
                call.stack.push(sum)
                return .values(1)
            }
            engine.setGlobal("bench_swift_add")
            engine.pushFunction("bench_swift_add_raw") { call in
                LuaBenchmarkAnchors.pushRawSum(on: call.stack)
                return .values(1)
            }
            engine.setGlobal("bench_swift_add_raw")
            engine.pushFunction("bench_direct_reads") { call in
                LuaEngine.directArgumentReads = try call.boolean(1)
                return .nothing
            }
            engine.setGlobal("bench_direct_reads")
        }
        let direct = LuaEngine.directArgumentReads
        let values: [String: Double]
        do {
            values = try await session.run(Self.source(calls: n, runs: settings.bestOf, direct: direct), chunkName: "=bench-p1")
        } catch {
            LuaEngine.directArgumentReads = direct
            await session.close()
            throw error
        }
        LuaEngine.directArgumentReads = direct
        await session.close()

        let empty = try figure(values, "empty")
        func line(_ label: String, _ key: String) throws -> BenchFigure {
            let t = try figure(values, key)
            let rate = Double(n) / t / 1e6
            let net = (t - empty) / Double(n) * 1e9
            return BenchFigure(label, t, unit: "s",
                               detail: String(format: "%.1f M calls/s, %.1f ns/call above the empty loop", rate, net))
        }
        var report = BenchReport(id: id, title: "binding call (\(millions(n)) calls, best of \(settings.bestOf))")
        report.figures = [
            BenchFigure("empty loop (s = s + i)", empty, unit: "s"),
            try line("lua function", "lua"),
            try line("C lua_CFunction", "c"),
            try line("C math.max (liblua)", "cmax"),
            try line("Swift binding", "swift"),
            try line("Swift binding, raw API", "swiftraw"),
            try line("Swift binding, arguments read through the API", "swiftapi"),
        ]
        let c = try figure(values, "c")
        report.ratios = [
            BenchRatio("Swift/C", try figure(values, "swift") / c, target: Self.target, goal: .atMost),
            BenchRatio("Swift raw API/C", try figure(values, "swiftraw") / c, target: nil, goal: .atMost),
            BenchRatio("Swift, API reads/C", try figure(values, "swiftapi") / c, target: nil, goal: .atMost),
            BenchRatio("lua function/C", try figure(values, "lua") / c, target: nil, goal: .atMost),
        ]
        report.notes = [
            "times are process CPU seconds (os.clock) inside one Lookout LuaRuntime state (cpuLimit 0; the count hook is armed only when a limit is reached, so never here)",
            "C lua_CFunction = a Swift @convention(c) function registered directly with lua_pushcclosure (no trampoline); "
                + "math.max is liblua's own C function, for comparison",
            "Swift binding = engine.pushFunction closure using call.integer(1), call.integer(2), call.stack.push; "
                + "raw API = the same closure reading with lua_tointegerx",
            "the trampoline reads the binding's upvalue and call.integer reads its argument's slot straight from "
                + "Lua's stack (checked against the API at start-up: \(direct ? "on" : "OFF, the check failed")); "
                + "API reads = the Swift binding with that turned off (lua_touserdata, lua_type + lua_tointegerx)",
        ]
        return report
    }

    /// The Lua chunk: round-robin over the variants, best of `runs` each, printed as key=seconds.
    static func source(calls: Int, runs: Int, direct: Bool) -> String {
        """
        local N, RUNS = \(calls), \(runs)
        local clock = os.clock
        local function lua_add(a, b) return a + b end
        local variants = {
          { "empty" }, { "lua", lua_add }, { "c", bench_c_add }, { "cmax", math.max },
          { "swift", bench_swift_add }, { "swiftraw", bench_swift_add_raw }, { "swiftapi", bench_swift_add, true },
        }
        local function call_loop(f)
          local s = 0
          local t0 = clock()
          for i = 1, N do s = f(s, i) end
          return clock() - t0, s
        end
        local function empty_loop()
          local s = 0
          local t0 = clock()
          for i = 1, N do s = s + i end
          return clock() - t0, s
        end
        local best = {}
        for _ = 1, RUNS do
          for _, v in ipairs(variants) do
            local name, f = v[1], v[2]
            local t, s
            if v[3] then bench_direct_reads(false) end
            if f then t, s = call_loop(f) else t, s = empty_loop() end
            if v[3] then bench_direct_reads(\(direct)) end
            local want = name == "cmax" and N or N * (N + 1) // 2
            if s ~= want then error(name .. " computed " .. tostring(s) .. ", expected " .. want) end
            if not best[name] or t < best[name] then best[name] = t end
          end
        end
        for _, v in ipairs(variants) do print(v[1] .. "=" .. string.format("%.9f", best[v[1]])) end
        """
    }
}

/// "10M", "1M", "250k".
func millions(_ n: Int) -> String {
    if n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
    if n % 1_000 == 0 { return "\(n / 1_000)k" }
    return "\(n)"
}
