import Foundation
import Lua

/// P7: ten thousand tasks sleeping at once in one Lua state: the memory they take and how late
/// they wake up.
struct SleepingTasksBenchmark: Benchmark {
    let id = "P7"
    let summary = "10,000 concurrent sleeping tasks: memory and wake-up lateness"

    /// Memory target in MiB (Lua state, and process RSS).
    static let memoryTarget = 20.0
    /// Lateness target in milliseconds (worst task).
    static let latenessTarget = 100.0

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let n = settings.sleepingTasks
        // Default options (64 MiB memory limit, 5 s CPU limit): what a script gets.
        let session = try await ScriptSession.start(name: "bench-p7.lua")
        await session.runtime.withEngine { engine in
            engine.pushFunction("bench_rss") { call in
                if call.isNil(1) == false { ProcessMemory.trim() }
                call.stack.push(ProcessMemory.residentBytes())
                return .values(1)
            }
            engine.setGlobal("bench_rss")
        }
        let values: [String: Double]
        let peak: Int
        do {
            values = try await session.run(Self.source(tasks: n), chunkName: "=bench-p7")
            peak = await session.runtime.withEngine { $0.memory.peak }
        } catch {
            await session.close()
            throw error
        }
        await session.close()

        let mib = 1_048_576.0
        let used0 = try figure(values, "used0"), used1 = try figure(values, "used1")
        let usedLive = try figure(values, "used_nogc")
        let rss0 = try figure(values, "rss0"), rss1 = try figure(values, "rss1")
        let stateMB = (used1 - used0) / mib
        let rssMB = (rss1 - rss0) / mib
        let worst = try figure(values, "worst") * 1000
        let p99 = try figure(values, "p99") * 1000
        let median = try figure(values, "median") * 1000
        let early = try figure(values, "earliest") * 1000

        var report = BenchReport(id: id, title: "\(n.formatted()) concurrent sleeping tasks (sleep 0.5–1.5 s, seed 42)")
        let perTask = { (bytes: Double) in String(format: "%.0f bytes/task", bytes / Double(n)) }
        report.figures = [
            BenchFigure("spawn all tasks", try figure(values, "spawn") * 1000, unit: "ms"),
            BenchFigure("Lua state before", used0 / mib, unit: "MB", detail: "script.memory() after a full GC"),
            BenchFigure("Lua state, all asleep", used1 / mib, unit: "MB",
                        detail: String(format: "after a full GC (%.2f MB before it)", usedLive / mib)),
            BenchFigure("Lua state delta", stateMB, unit: "MB", detail: perTask(used1 - used0)),
            BenchFigure("Lua state peak delta", (Double(peak) - used0) / mib, unit: "MB", detail: "allocator peak over the run"),
            BenchFigure("process RSS delta", rssMB, unit: "MB",
                        detail: perTask(rss1 - rss0) + String(format: " (VmRSS %.1f → %.1f MB)", rss0 / mib, rss1 / mib)),
            BenchFigure("wake-up lateness worst", worst, unit: "ms"),
            BenchFigure("wake-up lateness p99", p99, unit: "ms"),
            BenchFigure("wake-up lateness median", median, unit: "ms",
                        detail: String(format: "earliest %.3f ms (negative = woke early)", early)),
        ]
        report.ratios = [
            BenchRatio("Lua state MB/20 MB", stateMB / Self.memoryTarget, target: 1.0, goal: .atMost),
            BenchRatio("RSS delta MB/20 MB", rssMB / Self.memoryTarget, target: 1.0, goal: .atMost),
            BenchRatio("worst lateness/100 ms", worst / Self.latenessTarget, target: 1.0, goal: .atMost),
            BenchRatio("p99 lateness/100 ms", p99 / Self.latenessTarget, target: nil, goal: .atMost),
        ]
        report.notes = [
            "ratios are against the targets themselves (20 MB, 100 ms), not a measured anchor; MB = MiB",
            "lateness = script.uptime() after sleep(d) minus (script.uptime() before it + d); memory measured "
                + "while every task sleeps, after a full GC; the RSS baseline is taken after malloc_trim(0)",
        ]
        return report
    }

    /// The Lua chunk: spawn, measure while all sleep, wait for all, report key=value lines.
    static func source(tasks: Int) -> String {
        """
        local script = require "script"
        local N = \(tasks)
        local uptime = script.uptime
        math.randomseed(42)
        collectgarbage(); collectgarbage()
        local used0 = script.memory()
        local rss0 = bench_rss(true)
        local late, done = {}, 0
        local t0 = uptime()
        for i = 1, N do
          local d = 0.5 + math.random()
          task.spawn(function()
            local deadline = uptime() + d
            sleep(d)
            late[i] = uptime() - deadline
            done = done + 1
          end)
        end
        local spawn = uptime() - t0
        sleep(0.25)  -- every task has started and is asleep; the first wakes at 0.5 s
        assert(done == 0, "a task woke too early")
        local used_nogc = script.memory()
        collectgarbage(); collectgarbage()
        local used1 = script.memory()
        local rss1 = bench_rss()
        while done < N do sleep(0.05) end
        table.sort(late)
        local function at(q) return late[math.max(1, math.ceil(q * N))] end
        print(("spawn=%.9f"):format(spawn))
        print("used0=" .. used0); print("used1=" .. used1); print("used_nogc=" .. used_nogc)
        print("rss0=" .. rss0); print("rss1=" .. rss1)
        print(("worst=%.9f"):format(late[N])); print(("p99=%.9f"):format(at(0.99)))
        print(("median=%.9f"):format(at(0.5))); print(("earliest=%.9f"):format(late[1]))
        """
    }
}
