import Foundation
import Lua

/// P2: `json.decode` of a large Nightscout entries array, Lookout's C codec against lua-cjson
/// (in a plain `lua_State`) and Foundation's `JSONSerialization` (no Lua), on the same bytes.
struct JSONDecodeBenchmark: Benchmark {
    let id = "P2"
    let summary = "json.decode of Nightscout entries: Lookout vs lua-cjson vs JSONSerialization"

    /// Least cjson/Lookout time ratio that passes.
    static let target = 1.0
    /// Where Debian's lua-cjson puts the module.
    static let cjsonDirectory = "/usr/lib/x86_64-linux-gnu/lua/5.4"
    static let skipCJSON = "SKIP: apt-get install lua-cjson"

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let (json, entries) = NightscoutFixture.entries(bytes: settings.jsonBytes)
        let megabytes = Double(json.count) / 1_048_576
        var report = BenchReport(
            id: id,
            title: String(format: "json.decode (%.1f MB, %d Nightscout entries, best of %d)", megabytes, entries, settings.bestOf))

        let lookout = try await decodeWithLookout(json, runs: settings.bestOf)
        try check("Lookout json", lookout, entries: entries)
        let cjson = try decodeWithCJSON(json, runs: settings.bestOf)
        if let cjson { try check("lua-cjson", cjson, entries: entries) }
        let foundation = try decodeWithFoundation(json, runs: settings.bestOf)
        try check("JSONSerialization", foundation, entries: entries)
        if let cjson, cjson.sgvSum != lookout.sgvSum || foundation.sgvSum != lookout.sgvSum {
            throw BenchFailure("decoders disagree: sum of sgv \(lookout.sgvSum) / \(cjson.sgvSum) / \(foundation.sgvSum)")
        }

        func line(_ label: String, _ t: Double) -> BenchFigure {
            BenchFigure(label, t, unit: "s", detail: String(format: "%.1f MB/s", megabytes / t))
        }
        report.figures.append(line("Lookout json.decode", lookout.seconds))
        if let cjson {
            report.figures.append(line("lua-cjson decode", cjson.seconds))
            report.ratios.append(BenchRatio("cjson/Lookout", cjson.seconds / lookout.seconds, target: Self.target, goal: .atLeast))
        } else {
            report.figures.append(BenchFigure(skipped: "lua-cjson decode", reason: Self.skipCJSON))
            report.ratios.append(BenchRatio(skipped: "cjson/Lookout", target: Self.target, goal: .atLeast, reason: Self.skipCJSON))
        }
        report.figures.append(line("JSONSerialization", foundation.seconds))
        report.ratios.append(BenchRatio("JSONSerialization/Lookout", foundation.seconds / lookout.seconds, target: nil, goal: .atLeast))
        report.notes = [
            "times are process CPU seconds; each run starts after a full GC, the decoded value is freed outside the timing",
            "Lookout: require \"json\" in a LuaRuntime state (memory limit off); lua-cjson \(cjson == nil ? "(missing)" : "2.1 from \(Self.cjsonDirectory)") "
                + "in a plain luaL_newstate state; ratios ≥ 1 mean Lookout is at least as fast",
        ]
        return report
    }

    /// What one decoder measured, plus figures to check it decoded the same thing.
    struct Decoded {
        var seconds: Double
        var count: Int
        var sgvSum: Int
    }

    private func check(_ what: String, _ decoded: Decoded, entries: Int) throws {
        guard decoded.count == entries else {
            throw BenchFailure("\(what) decoded \(decoded.count) entries, expected \(entries)")
        }
    }

    /// The Lua chunk for both states: best of `runs`, then a check sum outside the timing.
    private static func chunk(decoder: String, runs: Int) -> String {
        """
        local decode, RUNS, data = \(decoder), \(runs), BENCH_DATA
        local clock = os.clock
        local best, count, sum = math.huge, 0, 0
        for r = 1, RUNS do
          collectgarbage(); collectgarbage()
          local t0 = clock()
          local v = decode(data)
          local t = clock() - t0
          if t < best then best = t end
          if r == RUNS then
            count = #v
            for i = 1, count do sum = sum + v[i].sgv end
          end
          v = nil
        end
        collectgarbage()
        """
    }

    private func decodeWithLookout(_ json: [UInt8], runs: Int) async throws -> Decoded {
        let session = try await ScriptSession.start(name: "bench-p2.lua") { options in
            options.cpuLimit = 0
            options.memoryLimit = 0
        }
        await session.runtime.withEngine { engine in
            LuaStack(engine.L).push(bytes: json)
            engine.setGlobal("BENCH_DATA")
        }
        let source = Self.chunk(decoder: #"require("json").decode"#, runs: runs)
            + "\nprint(('best=%.9f'):format(best)); print('count=' .. count); print('sum=' .. sum)"
        let values: [String: Double]
        do {
            values = try await session.run(source, chunkName: "=bench-p2")
        } catch {
            await session.close()
            throw error
        }
        await session.close()
        return Decoded(seconds: try figure(values, "best"), count: Int(try figure(values, "count")),
                       sgvSum: Int(try figure(values, "sum")))
    }

    /// nil when lua-cjson is not installed.
    private func decodeWithCJSON(_ json: [UInt8], runs: Int) throws -> Decoded? {
        guard FileManager.default.fileExists(atPath: Self.cjsonDirectory + "/cjson.so") else { return nil }
        guard let state = PlainLuaState() else { throw BenchFailure("cannot create a plain Lua state") }
        state.setGlobal("BENCH_DATA", bytes: json)
        let source = "package.cpath = '\(Self.cjsonDirectory)/?.so'\n"
            + Self.chunk(decoder: #"require("cjson").decode"#, runs: runs)
            + "\nreturn best, count, sum"
        let results = try state.run(source, chunkName: "=bench-p2-cjson")
        guard results.count == 3, let best = results[0], let count = results[1], let sum = results[2] else {
            throw BenchFailure("the cjson chunk returned \(results)")
        }
        return Decoded(seconds: best, count: Int(count), sgvSum: Int(sum))
    }

    private func decodeWithFoundation(_ json: [UInt8], runs: Int) throws -> Decoded {
        let data = Data(json)
        var best = Double.infinity
        var count = 0
        var sum = 0
        for run in 1...runs {
            let t0 = BenchClock.processCPU()
            let object = try JSONSerialization.jsonObject(with: data)
            best = min(best, BenchClock.processCPU() - t0)
            if run == runs, let array = object as? [Any] {
                count = array.count
                for case let entry as [String: Any] in array {
                    sum += (entry["sgv"] as? NSNumber)?.intValue ?? (entry["sgv"] as? Int) ?? 0
                }
            }
        }
        return Decoded(seconds: best, count: count, sgvSum: sum)
    }
}
