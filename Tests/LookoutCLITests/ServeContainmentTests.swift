import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 14: hostile scripts under `lookout serve` next to a healthy one. Every hostile script is
/// stopped and reported (crashed with an error naming the limit, or quarantined when its limits
/// could not stop it), the healthy one keeps its schedule, and SIGTERM's drain finishes.
final class ServeContainmentTests: CLITestCase, @unchecked Sendable {
    /// A hostile script and how `serve` must report it.
    struct Hostile {
        /// The file name under Scripts/.
        var name: String
        /// The script.
        var source: String
        /// The line `serve` logs once it has contained the script (after "<name>: ").
        var contained: String
        /// Text the log line must hold (the limit, the refusal).
        var reason: String
    }

    /// One entry per number that used to trap the whole process (issue 14 §1) and per way of
    /// slipping past a limit (§2).
    static let hostile: [Hostile] = [
        Hostile(name: "sleep-huge.lua", source: "sleep(1e10)\n",
                contained: "crashed (", reason: "duration must be between 0s and 366d"),
        Hostile(name: "sleep-text.lua", source: "sleep('2600000h')\n",
                contained: "crashed (", reason: "duration must be between 0s and 366d"),
        Hostile(name: "after-huge.lua", source: "timer.after(1e10, print)\n",
                contained: "crashed (", reason: "duration must be between 0s and 366d"),
        Hostile(name: "every-huge.lua", source: "timer.every(1e300, print)\n",
                contained: "crashed (", reason: "duration must be between 0s and 366d"),
        Hostile(name: "wait-huge.lua", source: "task.wait(task.spawn(function() end), 1e10)\n",
                contained: "crashed (", reason: "duration must be between 0s and 366d"),
        Hostile(name: "connect-huge.lua", source: "require('nightscout').connect{ url = 'http://127.0.0.1:9', timeout = 1e300 }\n",
                contained: "crashed (", reason: "must be between"),
        Hostile(name: "signalk-huge.lua", source: "require('signalk').connect{ url = 'http://127.0.0.1:9', timeout = 0/0 }\n",
                contained: "crashed (", reason: "must be between"),
        Hostile(name: "rep.lua", source: "local s = string.rep('', 1 << 62, '')\nlocal t = string.rep('ab', 1 << 40)\n",
                contained: "crashed (", reason: "resulting string too large"),
        Hostile(name: "move.lua", source: "table.move({}, 1, 1 << 50, 1, {})\n",
                contained: "crashed (", reason: "CPU limit exceeded"),
        Hostile(name: "concat.lua", source: "print(#table.concat(setmetatable({}, { __index = table.concat }), '', 1, 1 << 50))\n",
                contained: "crashed (", reason: "CPU limit exceeded"),
        Hostile(name: "insert.lua", source: "table.insert(setmetatable({}, { __len = function() return 1 << 50 end }), 1, 'x')\n",
                contained: "crashed (", reason: "CPU limit exceeded"),
        Hostile(name: "sort.lua", source: """
                table.sort(setmetatable({}, { __len = function() return (1 << 31) - 2 end, __index = rawlen, __newindex = rawlen }))

                """, contained: "crashed (", reason: "CPU limit exceeded"),
        Hostile(name: "gc.lua", source: "setmetatable({}, { __gc = function() while true do end end })\n",
                contained: "crashed (", reason: "__gc metamethods are not allowed"),
        Hostile(name: "tostring.lua", source: "error(setmetatable({}, { __tostring = function() while true do end end }))\n",
                contained: "crashed (", reason: "CPU limit exceeded: error handling"),
        Hostile(name: "close.lua", source: """
                local guard <close> = setmetatable({}, { __close = function() while true do end end })
                error("boom before close")

                """, contained: "crashed (", reason: "boom before close"),
        Hostile(name: "xpcall.lua", source: "xpcall(function() error('x') end, function() while true do end end)\n",
                contained: "crashed (", reason: "CPU limit exceeded"),
        // A finalizer reached through a metatable the host shares: Lua runs it with hooks off, so
        // only the last resort can contain it.
        Hostile(name: "finalizer.lua", source: """
                json.array_mt.__gc = function() while true do end end
                local t = json.decode("[1, 2]")
                t = nil
                collectgarbage()

                """, contained: "quarantined until its file changes: ", reason: "CPU limit exceeded"),
    ]

    func testHostileScriptsAreContainedWhileAHealthyOneKeepsItsSchedule() throws {
        try writeFile("Scripts/healthy.lua", """
            local schedule = require "schedule"
            local n = 0
            schedule.every(1, function() n = n + 1; print("tick " .. n) end, { name = "tick" })
            """)
        for script in Self.hostile { try writeFile("Scripts/" + script.name, script.source) }
        let serve = try launch(["serve", "--status-port", "0", "--cpu-limit", "0.5", "--drain", "2s"])
        for script in Self.hostile {
            XCTAssertTrue(serve.waitForOutput(.stderr, timeout: 60, "\(script.name) contained") { log in
                log.split(separator: "\n").contains { line in
                    line.contains("\(script.name): \(script.contained)") && line.contains(script.reason)
                }
            })
        }
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "while closing variables of main chunk", timeout: 60))
        // The healthy script went on: it ticks after every hostile one was contained.
        let mark = serve.outputCount
        XCTAssertTrue(serve.waitForOutput(after: mark, timeout: 30, "two more ticks") { text in
            text.components(separatedBy: "[healthy.lua] tick ").count >= 3
        })

        let status = try lookout(["status", "--json"])
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let entries = try XCTUnwrap(document["entries"] as? [[String: Any]])
        let healthy = try XCTUnwrap(entries.first { $0["name"] as? String == "healthy.lua" })
        XCTAssertEqual(healthy["state"] as? String, "running", status.stdout)
        XCTAssertEqual(healthy["errors"] as? Int, 0, status.stdout)
        let stuck = try XCTUnwrap(entries.first { $0["name"] as? String == "finalizer.lua" })
        XCTAssertEqual(stuck["state"] as? String, "quarantined", status.stdout)
        let table = try lookout(["status"])
        assertExit(table, 1)
        XCTAssertTrue(table.stdout.split(separator: "\n").contains { $0.hasPrefix("finalizer.lua") && $0.contains("quarantined") }, table.stdout)

        serve.send(signal: SIGTERM)
        let result = try XCTUnwrap(serve.waitForExit(timeout: 60))
        assertExit(result, 0)
        XCTAssertTrue(result.stderr.contains("lookout serve: stopped"), result.stderr)
    }

    func testIsolateEndsTheWorkerOfAStuckScript() throws {
        try writeFile("Scripts/tick.lua", """
            require("schedule").every(1, function() print("tick") end, { name = "tick" })
            """)
        let stuck = try XCTUnwrap(Self.hostile.first { $0.name == "finalizer.lua" })
        try writeFile("Scripts/" + stuck.name, stuck.source)
        let serve = try launch(["serve", "--isolate", "--status-port", "0", "--cpu-limit", "0.5", "--drain", "2s"])
        XCTAssertTrue(serve.waitForOutput(.stderr, timeout: 60, "the worker quarantined") { log in
            log.split(separator: "\n").contains { $0.contains("finalizer.lua: quarantined until its file changes: ") && $0.contains("CPU limit exceeded") && $0.contains("worker process") }
        })
        let mark = serve.outputCount
        XCTAssertTrue(serve.waitForOutput(after: mark, containing: "[tick.lua] tick", timeout: 30))
        serve.send(signal: SIGTERM)
        assertExit(try XCTUnwrap(serve.waitForExit(timeout: 60)), 0)
    }

    /// A worker whose serve was killed (SIGKILL: it could not stop its workers) ends by itself
    /// instead of running its script unsupervised. (Found as orphaned workers of killed test
    /// servers, still printing an hour later.)
    func testWorkersEndWhenTheirServeIsKilled() throws {
        try writeFile("Scripts/tick.lua", """
            require("schedule").every(1, function() print("tick") end, { name = "tick" })
            """)
        let serve = try launch(["serve", "--isolate", "--status-port", "0"])
        XCTAssertTrue(serve.waitForOutput(containing: "[tick.lua] tick", timeout: 60))
        let workers = Self.children(of: serve.pid)
        XCTAssertEqual(workers.count, 1, "one worker process")
        serve.send(signal: SIGKILL)
        _ = serve.waitForExit(timeout: 10)
        let deadline = Date(timeIntervalSinceNow: 10)
        while workers.contains(where: { kill($0, 0) == 0 }), Date() < deadline { usleep(50_000) }
        XCTAssertFalse(workers.contains { kill($0, 0) == 0 }, "a worker outlived its serve: \(workers)")
        for pid in workers { kill(pid, SIGKILL) }
    }

    /// The processes whose parent is `pid` (from /proc).
    static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { child in
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid
        }
    }
}
