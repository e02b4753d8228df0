import Foundation

/// P4: Signal K deltas per second delivered to a Lua `boat:on` handler (and a plain
/// `for d in boat:deltas{…}` loop) from a separate feeder process over loopback, against a Python
/// `websockets` client doing `json.loads` per message on the same stream in the same run.
struct DeltaStreamBenchmark: Benchmark {
    let id = "P4"
    let summary = "Signal K deltas/s to a Lua boat:on handler vs a Python websockets client (json.loads)"

    /// Least Lua `on` rate that passes, deltas/s.
    static let targetRate = 100_000.0
    /// Least Lua/Python rate ratio that passes.
    static let targetRatio = 3.0
    /// Most frames the feeder sends ahead of what the Lua consumer reported: below a loop's
    /// buffer (4,096) and the stream's event buffer (8,192), so nothing is ever dropped.
    static let window = 3_584

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let n = settings.deltaCount
        let setupStart = BenchClock.monotonic()
        let frames = Self.frames(count: n)
        let valueSum = Self.valueSum(count: n)
        let generated = BenchClock.monotonic() - setupStart

        let feeder = try DeltaStreamFeeder.start(frames: frames, hello: Self.hello)
        defer { feeder.stop() }
        return try await measure(feeder, valueSum: valueSum, n: n, generated: generated)
    }

    private func measure(_ feeder: DeltaStreamFeeder, valueSum: Double, n: Int, generated: Double) async throws -> BenchReport {
        let url = "http://127.0.0.1:\(feeder.port)"
        let stream = "ws://127.0.0.1:\(feeder.port)/signalk/v1/stream?subscribe=none"
        var report = BenchReport(id: id, title: "Signal K deltas to a consumer (\(n.formatted()) single-value deltas over loopback)")

        Self.log("feeder (python3, pid of its own) at \(url)")
        // 1. The feeder alone: every frame at once into a null WebSocket reader.
        feeder.flood()
        let sinkSeconds = try await DeltaStreamSink.receive(port: feeder.port, count: n)
        Self.log("null reader done")

        // 2. Lua boat:on handler, 3. Lua for loop; both paced a window ahead of the script.
        let lua = try await DeltaStreamScript.start(name: "bench-p4.lua") { feeder.progress($0) }
        let onValues: [String: Double], loopValues: [String: Double]
        do {
            onValues = try await lua.run(Self.onSource(url: url, n: n), chunkName: "=bench-p4-on") { progress in
                try await self.paced(feeder, lua: lua, progress: progress, n: n)
            }
            Self.log("Lua on done")
            loopValues = try await lua.run(Self.loopSource(url: url, n: n), chunkName: "=bench-p4-for") { progress in
                try await self.paced(feeder, lua: lua, progress: progress, n: n)
            }
        } catch {
            await lua.close()
            throw error
        }
        await lua.close()
        Self.log("Lua for done")
        // 2b. The on handler again, each delta on a new coroutine (what thread reuse saves).
        let fresh = try await DeltaStreamScript.start(name: "bench-p4-fresh.lua", reusesThreads: false) { feeder.progress($0) }
        let freshValues: [String: Double]
        do {
            freshValues = try await fresh.run(Self.onSource(url: url, n: n), chunkName: "=bench-p4-on-fresh") { progress in
                try await self.paced(feeder, lua: fresh, progress: progress, n: n)
            }
        } catch {
            await fresh.close()
            throw error
        }
        await fresh.close()
        Self.log("Lua on without thread reuse done")
        let freshSeconds = try figure(freshValues, "on")
        let onSeconds = try figure(onValues, "on"), loopSeconds = try figure(loopValues, "loop")
        for (name, values) in [("on", onValues), ("for", loopValues), ("on without thread reuse", freshValues)] {
            let sum = try figure(values, "sum")
            guard abs(sum - valueSum) <= 1e-6 * abs(valueSum) else {
                throw BenchFailure("the Lua \(name) consumer summed \(sum), expected \(valueSum)")
            }
        }

        // 4. Python websockets + json.loads, flooded all at once (the socket paces it).
        var python: DeltaStreamPython.Result?
        var pythonSkip: String?
        var pythonVersion = ""
        do {
            let venv = try DeltaStreamPython.prepare()
            defer { venv.remove() }
            pythonVersion = venv.version
            feeder.flood()
            python = try await venv.run(url: stream, count: n)
            if let p = python, abs(p.sum - valueSum) > 1e-6 * abs(valueSum) {
                throw BenchFailure("the Python client summed \(p.sum), expected \(valueSum)")
            }
        } catch let failure as BenchFailure where failure.description.hasPrefix("SKIP") {
            pythonSkip = failure.description
        }

        func rate(_ seconds: Double) -> Double { Double(n - 1) / seconds }
        func detail(_ seconds: Double) -> String { String(format: "%.3f s, %.2f µs/delta", seconds, seconds / Double(n - 1) * 1e6) }
        let onRate = rate(onSeconds)
        report.figures = [
            BenchFigure("feeder → null reader (the ceiling)", rate(sinkSeconds) / 1000, unit: "k deltas/s", detail: detail(sinkSeconds)),
            BenchFigure("Lua boat:on handler", onRate / 1000, unit: "k deltas/s", detail: detail(onSeconds)),
            BenchFigure("Lua for d in boat:deltas{}", rate(loopSeconds) / 1000, unit: "k deltas/s", detail: detail(loopSeconds)),
            BenchFigure("Lua boat:on, a new coroutine per delta", rate(freshSeconds) / 1000, unit: "k deltas/s",
                        detail: detail(freshSeconds) + " (LuaOptions.reusesThreads off)"),
        ]
        if let python {
            report.figures.append(BenchFigure(
                "Python websockets \(pythonVersion) + json.loads", rate(python.seconds) / 1000, unit: "k deltas/s",
                detail: detail(python.seconds)))
        } else {
            report.figures.append(BenchFigure(skipped: "Python websockets + json.loads", reason: pythonSkip ?? "SKIP"))
        }
        report.figures.append(BenchFigure("setup: encode frames", generated, unit: "s", detail: "not timed"))

        report.ratios.append(BenchRatio("Lua on rate / 100k per s", onRate / Self.targetRate, target: 1, goal: .atLeast))
        if let python {
            report.ratios.append(BenchRatio("Lua on/Python", onRate / rate(python.seconds), target: Self.targetRatio, goal: .atLeast))
            report.ratios.append(BenchRatio("Lua for/Python", rate(loopSeconds) / rate(python.seconds), target: nil, goal: .atLeast))
            report.ratios.append(BenchRatio("Lua on, new coroutines/Python", rate(freshSeconds) / rate(python.seconds),
                                            target: nil, goal: .atLeast))
        } else {
            report.ratios.append(BenchRatio(skipped: "Lua on/Python", target: Self.targetRatio, goal: .atLeast,
                                            reason: pythonSkip ?? "SKIP"))
        }
        report.notes = [
            "feeder: a separate python3 process (standard library only) on 127.0.0.1 that writes WebSocket frames "
                + "encoded in advance (signalk-server-style single-value deltas: navigation.speedOverGround/"
                + "courseOverGroundTrue/headingTrue, $source nmea0183.GP, 1 ms apart, distinct values) with sendall, "
                + "as fast as the socket takes them; its rate into a null reader (a blocking Swift WebSocket reader "
                + "on its own thread that only counts frames) is the ceiling; every consumer sums the values and the "
                + "sum is checked (nothing lost)",
            "rates are (N-1)/(time from the first to the Nth delta) taken inside each consumer (Lua: bench_now(), "
                + "a monotonic clock binding; Python: time.perf_counter()); wall clock, one run each",
            "Lua: a LuaRuntime with the signalk module, signalk.connect{url, subscribe=\"none\"}; boat:on(\"navigation.*\", fn) "
                + "(fn runs as its own task per delta, on a thread an earlier handler call returned from without waiting) "
                + "and for d in boat:deltas{paths={\"navigation.*\"}}; the on handler once more with LuaOptions.reusesThreads "
                + "off (a new coroutine per delta)",
            "pacing of the Lua consumers: the feeder is always faster than any consumer, and a Lookout boat drops the "
                + "oldest values when a script falls behind (by design: a slow script sees the newest data, the socket "
                + "never stalls), so a lossless run needs pacing: the script calls bench_progress(n) every 256 deltas, "
                + "which writes \"p n\" on the feeder's control pipe (one write(2) from the script's executor); the feeder "
                + "stays at most \(Self.window) frames ahead (below a loop's buffer of 4,096, so nothing is dropped) and "
                + "sleeps in select() otherwise",
            "Python: websockets.connect(max_size=None, compression=None), async for + json.loads per message, in a "
                + "throwaway venv; all N frames at once (TCP and websockets' read limit pace the feeder)",
        ]
        return report
    }

    /// Progress on standard error.
    static func log(_ text: String) { FileHandle.standardError.write(Data("  P4: \(text)\n".utf8)) }

    /// Lets the feeder serve the next connection paced by the script's progress (which the script
    /// writes to the feeder itself); fails when the script makes no progress for 10 s.
    private func paced(_ feeder: DeltaStreamFeeder, lua: DeltaStreamScript, progress: DeltaStreamProgress, n: Int) async throws {
        feeder.paced(window: Self.window)
        while !progress.hasEnded {
            try await Task.sleep(for: .milliseconds(200))
            if progress.secondsSinceChange > 10 && !progress.hasEnded {
                feeder.abort()
                await lua.runtime.cancelAll()
                throw BenchFailure("the Lua consumer stalled at \(progress.current) of \(n) deltas "
                    + "(values dropped or the script ended)")
            }
        }
    }

    /// The hello the feeder sends first (as signalk-server does).
    static let hello = #"{"name":"signalk-server","version":"2.31.1","self":"vessels.urn:mrn:imo:mmsi:230099999","roles":["master","main"],"timestamp":"2024-05-01T10:00:00.000Z"}"#

    static let paths = ["navigation.speedOverGround", "navigation.courseOverGroundTrue", "navigation.headingTrue"]

    /// The value of delta `i` (distinct for every `i`).
    static func value(_ i: Int) -> Double { Double(i % 1_000_000) / 100_000 + Double(i / 1_000_000) * 1e-7 }

    static func valueSum(count: Int) -> Double { (0..<count).reduce(0.0) { $0 + value($1) } }

    /// `count` deltas as signalk-server sends them, 1 ms apart from 2024-05-01T10:00:00.000Z.
    static func frames(count: Int) -> [String] {
        let context = "vessels.urn:mrn:imo:mmsi:230099999"
        var out: [String] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            let ms = i % 1000, s = (i / 1000) % 60, m = (i / 60_000) % 60, h = 10 + i / 3_600_000
            let timestamp = "2024-05-01T" + pad(h, 2) + ":" + pad(m, 2) + ":" + pad(s, 2) + "." + pad(ms, 3) + "Z"
            out.append(#"{"context":"\#(context)","updates":[{"source":{"sentence":"RMC","talker":"GP","type":"NMEA0183","label":"nmea0183"},"$source":"nmea0183.GP","timestamp":"\#(timestamp)","values":[{"path":"\#(paths[i % 3])","value":\#(value(i))}]}]}"#)
        }
        return out
    }

    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    static func onSource(url: String, n: Int) -> String {
        """
        local signalk = require "signalk"
        local N, progress, now = \(n), bench_progress, bench_now
        local boat = assert(signalk.connect { url = "\(url)", subscribe = "none" })
        local count, sum, first = 0, 0.0, 0
        local h
        h = boat:on("navigation.*", function(d)
          count = count + 1
          sum = sum + d.value
          if count == 1 then first = now() end
          if count == N then
            print("on=" .. string.format("%.9f", now() - first))
            print("sum=" .. string.format("%.17g", sum))
            progress(count)
            h:stop()
            boat:close()
          elseif count % 256 == 0 then
            progress(count)
          end
        end)
        progress(0)
        """
    }

    static func loopSource(url: String, n: Int) -> String {
        """
        local signalk = require "signalk"
        local N, progress, now = \(n), bench_progress, bench_now
        local boat <close> = assert(signalk.connect { url = "\(url)", subscribe = "none" })
        local count, sum, first = 0, 0.0, 0
        local it, s, c, cursor = boat:deltas { paths = { "navigation.*" } }
        progress(0)
        for d in it, s, c, cursor do
          count = count + 1
          sum = sum + d.value
          if count == 1 then first = now() end
          if count == N then break end
          if count % 256 == 0 then progress(count) end
        end
        print("loop=" .. string.format("%.9f", now() - first))
        print("sum=" .. string.format("%.17g", sum))
        progress(count)
        """
    }
}

extension BenchSettings {
    /// Deltas per consumer in P4.
    var deltaCount: Int { quick ? 50_000 : 500_000 }
}
