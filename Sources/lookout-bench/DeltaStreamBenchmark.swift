import Foundation
import LookoutSim

/// P4: Signal K deltas per second delivered to a Lua `boat:on` handler (and a plain
/// `for d in boat:deltas{…}` loop) from the simulator over loopback, against a Python
/// `websockets` client doing `json.loads` per message on the same stream in the same run.
struct DeltaStreamBenchmark: Benchmark {
    let id = "P4"
    let summary = "Signal K deltas/s to a Lua boat:on handler vs a Python websockets client (json.loads)"

    /// Least Lua `on` rate that passes, deltas/s.
    static let targetRate = 100_000.0
    /// Least Lua/Python rate ratio that passes.
    static let targetRatio = 3.0
    /// Frames queued per flood call while a Lua consumer is paced.
    static let chunk = 256
    /// Most frames ahead of what the Lua consumer reported: below the stream's event buffer
    /// (1,024) and a loop's buffer (4,096), so nothing is ever dropped.
    static let window = 768

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let n = settings.deltaCount
        let setupStart = BenchClock.monotonic()
        let frames = Self.frames(count: n)
        let valueSum = Self.valueSum(count: n)
        let generated = BenchClock.monotonic() - setupStart

        let sim = try SignalKSimulator(options: .init(rate: 1, autoTick: false))
        let base = try await sim.start()
        do {
            let report = try await measure(sim, base: base, frames: frames, valueSum: valueSum, n: n, generated: generated)
            await sim.stop()
            return report
        } catch {
            await sim.stop()
            throw error
        }
    }

    private func measure(_ sim: SignalKSimulator, base: URL, frames: [String], valueSum: Double, n: Int,
                         generated: Double) async throws -> BenchReport {
        let url = base.absoluteString
        let stream = "ws://127.0.0.1:\(sim.port)/signalk/v1/stream?subscribe=none"
        var report = BenchReport(id: id, title: "Signal K deltas to a consumer (\(n.formatted()) single-value deltas over loopback)")

        Self.log("simulator at \(url)")
        // 1. The server alone: flood into a null WebSocket reader.
        try await waitForConnections(sim, 0)
        let sinkTask = Task { try await DeltaStreamSink.receive(port: sim.port, count: n) }
        try await waitForConnections(sim, 1)
        let queueStart = BenchClock.monotonic()
        await sim.flood(frames: frames, count: n)
        let queueSeconds = BenchClock.monotonic() - queueStart
        Self.log(String(format: "queued %d frames in %.3f s", n, queueSeconds))
        let sinkSeconds = try await sinkTask.value
        Self.log("null reader done")

        // 2. Lua boat:on handler, 3. Lua for loop; both paced a window ahead of the script.
        let lua = try await DeltaStreamScript.start(name: "bench-p4.lua")
        let onValues: [String: Double], loopValues: [String: Double]
        do {
            try await waitForConnections(sim, 0)
            onValues = try await lua.run(Self.onSource(url: url, n: n), chunkName: "=bench-p4-on") { progress in
                try await self.paced(sim, frames: frames, progress: progress)
            }
            Self.log("Lua on done")
            try await waitForConnections(sim, 0)
            loopValues = try await lua.run(Self.loopSource(url: url, n: n), chunkName: "=bench-p4-for") { progress in
                try await self.paced(sim, frames: frames, progress: progress)
            }
        } catch {
            await lua.close()
            throw error
        }
        await lua.close()
        Self.log("Lua for done")
        let onSeconds = try figure(onValues, "on"), loopSeconds = try figure(loopValues, "loop")
        for (name, values) in [("on", onValues), ("for", loopValues)] {
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
            try await waitForConnections(sim, 0)
            python = try await venv.run(url: stream, count: n) {
                try await waitForConnections(sim, 1)
                await sim.flood(frames: frames, count: n)
            }
            if let p = python, abs(p.sum - valueSum) > 1e-6 * abs(valueSum) {
                throw BenchFailure("the Python client summed \(p.sum), expected \(valueSum)")
            }
        } catch let failure as BenchFailure where failure.description.hasPrefix("SKIP") {
            pythonSkip = failure.description
        }

        func rate(_ seconds: Double) -> Double { Double(n - 1) / seconds }
        let onRate = rate(onSeconds)
        report.figures = [
            BenchFigure("Lua boat:on handler", onRate / 1000, unit: "k deltas/s",
                        detail: String(format: "%.3f s, %.2f µs/delta", onSeconds, onSeconds / Double(n - 1) * 1e6)),
            BenchFigure("Lua for d in boat:deltas{}", rate(loopSeconds) / 1000, unit: "k deltas/s",
                        detail: String(format: "%.3f s, %.2f µs/delta", loopSeconds, loopSeconds / Double(n - 1) * 1e6)),
        ]
        if let python {
            report.figures.append(BenchFigure(
                "Python websockets \(pythonVersion) + json.loads", rate(python.seconds) / 1000, unit: "k deltas/s",
                detail: String(format: "%.3f s, %.2f µs/delta", python.seconds, python.seconds / Double(n - 1) * 1e6)))
        } else {
            report.figures.append(BenchFigure(skipped: "Python websockets + json.loads", reason: pythonSkip ?? "SKIP"))
        }
        report.figures.append(BenchFigure(
            "server → null reader (flood send rate)", rate(sinkSeconds) / 1000, unit: "k deltas/s",
            detail: String(format: "%.3f s; queueing %d frames took %.3f s (%.1f M/s)", sinkSeconds, n, queueSeconds,
                           Double(n) / queueSeconds / 1e6)))
        report.figures.append(BenchFigure("setup: encode frames", generated, unit: "s", detail: "not timed"))

        report.ratios.append(BenchRatio("Lua on rate / 100k per s", onRate / Self.targetRate, target: 1, goal: .atLeast))
        if let python {
            report.ratios.append(BenchRatio("Lua on/Python", onRate / rate(python.seconds), target: Self.targetRatio, goal: .atLeast))
            report.ratios.append(BenchRatio("Lua for/Python", rate(loopSeconds) / rate(python.seconds), target: nil, goal: .atLeast))
        } else {
            report.ratios.append(BenchRatio(skipped: "Lua on/Python", target: Self.targetRatio, goal: .atLeast,
                                            reason: pythonSkip ?? "SKIP"))
        }
        report.notes = [
            "simulator in this process on 127.0.0.1 (autoTick off); SignalKSimulator.flood queues pre-encoded "
                + "signalk-server-style single-value deltas (navigation.speedOverGround/courseOverGroundTrue/headingTrue, "
                + "$source nmea0183.GP, 1 ms apart, distinct values) on every socket; every consumer sums the values and "
                + "the sum is checked",
            "rates are (N-1)/(time from the first to the Nth delta) taken inside each consumer (Lua: bench_now(), "
                + "a monotonic clock binding; Python: time.perf_counter()); wall clock, one run each",
            "Lua: a LuaRuntime with the signalk module, signalk.connect{url, subscribe=\"none\"}; boat:on(\"navigation.*\", fn) "
                + "(fn runs as its own task per delta) and for d in boat:deltas{paths={\"navigation.*\"}}; the flood stays "
                + "\(Self.window) frames ahead of the count the script reports every 128 deltas, since the stream's event "
                + "buffer (1,024) and a loop's buffer (4,096) drop the oldest when full",
            "Python: websockets.connect(max_size=None, compression=None), async for + json.loads per message, in a "
                + "throwaway venv; all N frames queued at once (TCP paces the server)",
            "flood send rate: a blocking Swift WebSocket reader on its own thread that only counts frames",
        ]
        return report
    }

    /// Progress on standard error.
    static func log(_ text: String) { FileHandle.standardError.write(Data("  P4: \(text)\n".utf8)) }

    /// Queues the frames a chunk at a time, never more than `window` ahead of the script.
    private func paced(_ sim: SignalKSimulator, frames: [String], progress: DeltaStreamProgress) async throws {
        await progress.wait(atLeast: 0)
        guard !progress.hasEnded else { return }
        try await waitForConnections(sim, 1)
        var sent = 0
        let watchdog = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(500))
                if progress.secondsSinceChange > 10 { progress.end() }
            }
        }
        defer { watchdog.cancel() }
        while sent < frames.count {
            let k = min(Self.chunk, frames.count - sent)
            await sim.flood(frames: Array(frames[sent..<sent + k]), count: k)
            sent += k
            await progress.wait(atLeast: sent - Self.window)
            if progress.hasEnded && progress.current < frames.count {
                throw BenchFailure("the Lua consumer stalled at \(progress.current) of \(frames.count) deltas "
                    + "(values dropped or the script ended)")
            }
        }
    }

    /// Waits until the simulator has exactly `count` sockets (5 s at most).
    private func waitForConnections(_ sim: SignalKSimulator, _ count: Int) async throws {
        let deadline = BenchClock.monotonic() + 5
        while await sim.connectionCount() != count {
            guard BenchClock.monotonic() < deadline else {
                throw BenchFailure("the simulator has \(await sim.connectionCount()) sockets, expected \(count)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

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
          elseif count % 128 == 0 then
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
          if count % 128 == 0 then progress(count) end
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
