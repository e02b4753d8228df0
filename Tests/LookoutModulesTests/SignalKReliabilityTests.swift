import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import SignalKKit
import XCTest

@testable import LookoutConfig
@testable import LookoutModules

/// What the script's handler received, keyed `path=value`; waits without sleeping (a deadline
/// only guards against a hang).
final class SignalKReliabilityCollector: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is only touched while holding `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var waiters: [Int: (key: String, continuation: CheckedContinuation<Bool, Never>)] = [:]
    private var expired: Set<Int> = []
    private var nextID = 0

    func record(_ key: String) {
        let wake = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            counts[key, default: 0] += 1
            let ids = waiters.filter { $0.value.key == key }.map(\.key)
            return ids.compactMap { waiters.removeValue(forKey: $0)?.continuation }
        }
        for c in wake { c.resume(returning: true) }
    }

    /// True once `key` was recorded; false when `seconds` passed first.
    func wait(for key: String, seconds: Double) async -> Bool {
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let ready = lock.withLock { () -> Bool? in
                if counts[key, default: 0] > 0 { return true }
                if expired.contains(id) { return false }
                waiters[id] = (key, c)
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }

    private func expire(_ id: Int) {
        let c = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            guard let w = waiters.removeValue(forKey: id) else {
                expired.insert(id)
                return nil
            }
            return w.continuation
        }
        c?.resume(returning: false)
    }
}

/// Test-only `skrel` module: drives the reliability simulator and reads the boat's stream.
///
/// - `skrel.publish(path, int)`: publishes a value (queued on every socket when it returns);
/// - `skrel.restart()` / `skrel.drop()`: the simulator's faults; `skrel.connections()`;
/// - `skrel.record(key)` (called by the handler) and `skrel.await(key, seconds)`;
/// - `skrel.await_hello(boat, n, seconds)`: until the boat's stream has had `n` hellos;
/// - `skrel.stats(boat)`: `{hellos, subscribes, suppressed, dropped, malformed, subscriptions}`.
struct SignalKReliabilityControlModule: LuaModule {
    let name = "skrel"
    let stub = "---@meta skrel\n"
    let collector: SignalKReliabilityCollector

    struct Stats: Sendable {
        let hellos: Int, subscribes: Int, suppressed: Int, dropped: Int, malformed: Int, subscriptions: Int
    }

    static func awaitHello(_ stream: SignalKStream, atLeast n: Int, seconds: Double) async -> Bool {
        let events = await stream.events()
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                if await stream.helloCount >= n { return true }
                for await event in events {
                    if case .hello = event, await stream.helloCount >= n { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                return false
            }
            let result = await group.next() ?? false
            group.cancelAll()
            return result
        }
    }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        let collector = self.collector
        engine.pushLibrary([
            "publish": { call in
                let path = try call.string(1)
                let value = try call.integer(2)
                return try call.wait("publish", {
                    try await SignalKTestSim.reliability.publish(path: path, value: .int(value))
                    return true
                }) { (stack: LuaStack, ok: Bool) in
                    stack.push(ok)
                    return 1
                }
            },
            "restart": { call in
                try call.wait("restart", {
                    let sim = try await SignalKTestSim.reliability.get().sim
                    await sim.restart()
                    return await sim.serverStartID()
                }) { (stack: LuaStack, id: String) in
                    stack.push(id)
                    return 1
                }
            },
            "drop": { call in
                try call.wait("drop", {
                    try await SignalKTestSim.reliability.get().sim.dropAllConnections()
                    return true
                }) { (stack: LuaStack, ok: Bool) in
                    stack.push(ok)
                    return 1
                }
            },
            "connections": { call in
                try call.wait("connections", {
                    try await SignalKTestSim.reliability.get().sim.connectionCount()
                }) { (stack: LuaStack, n: Int) in
                    stack.push(LuaValue.int(Int64(n)))
                    return 1
                }
            },
            "record": { call in
                collector.record(try call.string(1))
                return .nothing
            },
            "await": { call in
                let key = try call.string(1)
                let seconds = try call.number(2)
                return try call.wait("await \(key)", { await collector.wait(for: key, seconds: seconds) }) { (stack: LuaStack, ok: Bool) in
                    stack.push(ok)
                    return 1
                }
            },
            "await_hello": { call in
                let boat = try call.object(1, as: SignalKLuaBoat.self, type: SignalKLuaBoat.type)
                let n = Int(try call.integer(2))
                let seconds = try call.number(3)
                let stream = boat.stream
                return try call.wait("await hello", { await Self.awaitHello(stream, atLeast: n, seconds: seconds) }) { (stack: LuaStack, ok: Bool) in
                    stack.push(ok)
                    return 1
                }
            },
            "stats": { call in
                let boat = try call.object(1, as: SignalKLuaBoat.self, type: SignalKLuaBoat.type)
                let stream = boat.stream
                return try call.wait("stats", {
                    Stats(hellos: await stream.helloCount, subscribes: await stream.subscribeMessagesSent,
                          suppressed: await stream.suppressedDuplicateCount, dropped: await stream.droppedEventCount,
                          malformed: await stream.malformedFrameCount, subscriptions: await stream.subscriptions.count)
                }) { (stack: LuaStack, s: Stats) in
                    stack.push(LuaValue.object([
                        "hellos": .int(Int64(s.hellos)), "subscribes": .int(Int64(s.subscribes)),
                        "suppressed": .int(Int64(s.suppressed)), "dropped": .int(Int64(s.dropped)),
                        "malformed": .int(Int64(s.malformed)), "subscriptions": .int(Int64(s.subscriptions)),
                    ]))
                    return 1
                }
            },
        ], prefix: "skrel.", on: stack)
    }
}

final class SignalKReliabilityTests: XCTestCase {
    /// R2: the simulator is restarted 20 times (and its sockets dropped 5 more times) while a Lua
    /// handler consumes two `instant` subscriptions. Every value published while connected is
    /// handled exactly once; of the values published while disconnected (the server does not
    /// buffer, it only caches the latest value per path and replays it on subscribe) the last one
    /// per path is handled exactly once and earlier ones not at all; afterwards each subscription
    /// is active exactly once (one subscribe message per hello, one delivery per value, nothing
    /// suppressed as a duplicate).
    ///
    /// The one re-delivery allowed: after a *restart* (new `serverStartId`) the stream forgets the
    /// values it has seen, so the replay of a path's cached value (the last value handled before
    /// the restart) may reach the handler a second time, at most once per path and restart. After
    /// a plain drop (same `serverStartId`) no re-delivery is allowed.
    func testRestartsWhileAHandlerConsumesTheStream() async throws {
        let base = try await SignalKTestSim.reliability.get().base
        let collector = SignalKReliabilityCollector()
        let script = """
            local signalk = require 'signalk'
            local skrel = require 'skrel'
            local CYCLES, BATCH, WAIT = 25, 4, 20
            local boat <close> = assert(signalk.connect { url = "\(base.absoluteString)", timeout = 10, subscribe = {
              { path = "environment.r2.a.*", policy = "instant", minPeriod = 0 },
              { path = "environment.r2.b.*", policy = "instant", minPeriod = 0 },
            } })
            local PATHS = { "environment.r2.a.v", "environment.r2.b.v" }
            local got = {}       -- "path=value" -> deliveries to the handler
            local handled = 0
            local h <close> = boat:on("environment.r2.*", function(d)
              local k = d.path .. "=" .. tostring(math.tointeger(d.value) or d.value)
              got[k] = (got[k] or 0) + 1
              handled = handled + 1
              skrel.record(k)
            end)

            local live, offline_first, offline_last = {}, {}, {}
            local last = {}      -- path -> key of its latest published value
            local n = 0
            local function publish(p)
              n = n + 1
              local k = p .. "=" .. n
              assert(skrel.publish(p, n))
              last[p] = k
              return k
            end
            local function await(k) assert(skrel.await(k, WAIT), "never handled: " .. k) end

            -- One value per path first: it arrives live or through the cached-value replay when
            -- the server takes the re-sent subscription; either way, once it is handled the
            -- subscriptions are active and the rest of the batch must arrive live.
            local function batch()
              local first = {}
              for _, p in ipairs(PATHS) do local k = publish(p); live[k] = true; first[#first + 1] = k end
              for _, k in ipairs(first) do await(k) end
              local rest = {}
              for _ = 1, BATCH - 1 do
                for _, p in ipairs(PATHS) do local k = publish(p); live[k] = true; rest[#rest + 1] = k end
              end
              for _, k in ipairs(rest) do await(k) end
            end

            local restarts, drops, hellos, offline_cycles, early, ids = 0, 0, 1, 0, 0, {}
            ids[boat:hello().serverStartId] = true
            for c = 1, CYCLES do
              batch()
              local drop = c % 5 == 0
              if drop then
                skrel.drop(); drops = drops + 1
              else
                -- the restarted server replays what it kept: the client must not deliver it again
                ids[skrel.restart()] = true; restarts = restarts + 1
              end
              -- the fault closed every socket at once; the client reconnects after its ~1 s backoff
              -- (were it back already, an "offline" value would simply arrive live: still once)
              if skrel.connections() ~= 0 then early = early + 1 end
              local pending = {}
              if c % 2 == 1 then
                -- disconnected (the client waits about 1 s before reconnecting): two values per path
                offline_cycles = offline_cycles + 1
                for _, p in ipairs(PATHS) do
                  offline_first[publish(p)] = true
                  local k = publish(p); offline_last[k] = true; pending[#pending + 1] = k
                end
              end
              hellos = hellos + 1
              assert(skrel.await_hello(boat, hellos, WAIT), "no hello " .. hellos)
              for _, k in ipairs(pending) do await(k) end
            end
            batch()

            -- each subscription active exactly once: one more value per path is handled once and
            -- no copy of it was suppressed as a duplicate
            local before = skrel.stats(boat)
            local probes = {}
            for _, p in ipairs(PATHS) do local k = publish(p); live[k] = true; probes[#probes + 1] = k end
            for _, k in ipairs(probes) do await(k) end
            local after = skrel.stats(boat)

            local lost, redelivered, bad = 0, 0, {}
            for k in pairs(offline_first) do
              local g = got[k] or 0
              if g == 0 then lost = lost + 1 elseif g > 1 then bad[#bad + 1] = k .. " x" .. g end
            end
            local function check(set)
              for k in pairs(set) do
                local g = got[k] or 0
                local extra = g - 1
                if g ~= 1 then bad[#bad + 1] = k .. " x" .. g end
                if extra > 0 then redelivered = redelivered + extra end
              end
            end
            check(live)
            check(offline_last)
            for k in pairs(got) do
              if not (live[k] or offline_first[k] or offline_last[k]) then bad[#bad + 1] = "unknown " .. k end
            end
            table.sort(bad)
            local nids = 0
            for _ in pairs(ids) do nids = nids + 1 end
            local published, livecount, lastcount = n, 0, 0
            for _ in pairs(live) do livecount = livecount + 1 end
            for _ in pairs(offline_last) do lastcount = lastcount + 1 end
            print("faults", restarts, drops, nids)
            print("bad", #bad, table.concat(bad, " "))
            print("hellos", after.hellos, after.subscribes, after.subscriptions, skrel.connections(), boat:state())
            print("final", after.suppressed - before.suppressed, got[probes[1]], got[probes[2]])
            print("losses", after.dropped, after.malformed)
            print(string.format("figures published=%d live=%d offline=%d offline_lost=%d handled=%d redelivered_after_restart=%d suppressed=%d early_reconnects=%d",
              published, livecount, 2 * lastcount, lost, handled, redelivered, after.suppressed, early))
            h:stop()
            """
        let clock = ContinuousClock()
        let started = clock.now
        let (transcript, outcome) = try await runLua(script, modules: [SignalKModule(
            config: try HostConfig(text: ""), paths: LookoutPaths(configFile: "/nonexistent/config.toml", stateDirectory: "/nonexistent"),
            environment: [:]), SignalKReliabilityControlModule(collector: collector)])
        let elapsed = clock.now - started
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        let lines = transcript.lines
        print("R2 \(elapsed): \(lines.last ?? "-")")
        XCTAssertEqual(lines.count, 6, "\(lines)")
        guard lines.count == 6 else { return }
        // 20 restarts, 5 drops; 21 server start ids (the first and one per restart)
        XCTAssertEqual(lines[0], "faults\t20\t5\t21")
        XCTAssertEqual(lines[1], "bad\t0\t")
        // 26 hellos (connect + 25 reconnects), one subscribe message each, 2 rows, 1 socket
        XCTAssertEqual(lines[2], "hellos\t26\t26\t2\t1\tconnected")
        XCTAssertEqual(lines[3], "final\t0\t1\t1")
        XCTAssertEqual(lines[4], "losses\t0\t0")
    }
}
