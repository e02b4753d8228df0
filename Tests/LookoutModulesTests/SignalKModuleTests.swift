import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
import LookoutWire


/// A second simulator, with security on, for token errors (never stopped either).
actor SignalKSecureModuleSim {
    static let shared = SignalKSecureModuleSim()
    private var url: URL?

    func base() async throws -> URL {
        if let url { return url }
        let sim = try SignalKSimulator(options: .init(rate: 10, seed: 6, autoTick: false, security: true))
        let started = try await sim.start()
        url = started
        return started
    }
}

/// `simctl.publish(path, value)` (waits until the simulator queued the delta on every socket) and
/// `simctl.loops(boat)` (open `deltas` loops of a boat).
struct SignalKSimControlModule: LuaModule {
    let name = "simctl"
    let stub = "---@meta simctl\n"

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.pushLibrary([
            "publish": { call in
                let path = try call.string(1)
                let json: JSONValue
                switch try call.value(2) {
                case .int(let i): json = .int(i)
                case .double(let d): json = .double(d)
                case .string(let s): json = .string(s.description)
                case .bool(let b): json = .bool(b)
                default: json = .null
                }
                return try call.wait("publish", {
                    try await SignalKTestSim.module.publish(path: path, value: json)
                    return true
                }) { stack, ok in
                    stack.push(ok)
                    return 1
                }
            },
            "loops": { call in
                let boat = try call.object(1, as: SignalKLuaBoat.self, type: SignalKLuaBoat.type)
                return call.returning(.int(Int64(boat.feed.loopCount)))
            },
        ], prefix: "simctl.", on: stack)
    }
}

final class SignalKModuleTests: XCTestCase {
    private var base: URL!

    override func setUp() async throws {
        base = try await SignalKTestSim.module.get().base
    }

    /// Runs `source` with `signalk` (profiles `boat` and `quiet`) and `simctl`; `URL` is the
    /// simulator's address.
    private func run(_ source: String, file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let config = try HostConfig(text: """
            [signalk.boat]
            url = "\(base.absoluteString)"
            token_env = "SK_TOKEN"
            subscribe = "self"
            [signalk.quiet]
            url = "\(base.absoluteString)"
            subscribe = "none"
            """)
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-sk-\(UUID())")
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let (transcript, outcome) = try await runLua(
            "local signalk = require 'signalk'\nlocal simctl = require 'simctl'\nlocal URL = \"\(base.absoluteString)\"\n" + source,
            modules: [SignalKModule(config: config, paths: paths, environment: ["SK_TOKEN": "not-checked-by-the-simulator"]),
                      SignalKSimControlModule()])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    func testConnectWithOptionsKnowsHelloAndSelf() async throws {
        let lines = try await run("""
            local boat = assert(signalk.connect { url = URL, timeout = 10 })
            print(boat:state(), boat:self())
            local h = boat:hello()
            print(h.name, h.version, h.self == boat:self(), type(h.roles))
            print(tostring(boat):match("^signalk boat ") ~= nil)
            boat:close()
            boat:close()
            print(pcall(boat.state, boat))
            """)
        XCTAssertEqual(lines.first, "connected\tvessels.urn:mrn:imo:mmsi:230099999")
        XCTAssertEqual(lines.count, 4)
        XCTAssertTrue(lines[1].hasSuffix("\ttrue\ttable"), lines[1])
        XCTAssertEqual(lines[2], "true")
        XCTAssertEqual(lines[3], "true\tclosed")
    }

    /// `boat:meta(path)`: the path's metadata as the server keeps it, after a meta PUT too.
    func testMetaOfAPath() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "quiet")
            local m = assert(boat:meta "navigation.speedOverGround")
            print(m.units, type(m.description))
            local done = assert(boat:put("environment.water.temperature.meta.displayName", "Sea"))
            print(done.state, done.statusCode)
            local t = assert(boat:meta "environment.water.temperature")
            print(t.units, t.displayName)
            local none, err = boat:meta "navigation.noSuchThing"
            print(none, err.code, err.status)
            print(pcall(boat.meta, boat, "vessels.self.navigation"))
            """)
        XCTAssertEqual(lines, [
            "m/s\tstring",
            "COMPLETED\t200",
            "K\tSea",
            "nil\thttp\t404",
            "false\tbad argument #1 to 'signalk.boat:meta' (expected a path of the own vessel such as \"navigation.speedOverGround\")",
        ])
    }

    /// Meta deltas reach the loops and handlers that ask for them (`meta = true`: `d.meta`, no
    /// `d.value`), and only those (issue 27).
    func testMetaDeltasReachLoopsThatAskForThem() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "quiet")
            assert(boat:subscribe { "environment.metatest.*" })
            local got, metas = {}, {}
            local plain <close> = boat:on("environment.metatest.*", function(d) got[#got + 1] = d end)
            local withMeta <close> = boat:on("environment.metatest.*", function(d) metas[#metas + 1] = d end, { meta = true })
            local it = boat:deltas { paths = { "environment.metatest.*" }, meta = true }
            assert(boat:put("environment.metatest.depth.meta.displayName", "Keel"))
            simctl.publish("environment.metatest.depth", 4.2)
            -- The PUT's meta delta, then (as signalk-server's sendMeta does before a path's first
            -- value) the path's meta again, then the value.
            for _ = 1, 3 do
              local d = it()
              print(d.path, d.meta and d.meta.displayName, d.value)
            end
            for _ = 1, 1000 do if #got >= 1 and #metas >= 3 then break end sleep(0.01) end
            print(#got, got[1].value, got[1].meta, metas[1].meta.displayName, metas[3].value)
            print(pcall(boat.on, boat, "x", print, { metas = true }))
            """)
        XCTAssertEqual(lines, [
            "environment.metatest.depth\tKeel\tnil",
            "environment.metatest.depth\tKeel\tnil",
            "environment.metatest.depth\tnil\t4.2",
            "1\t4.2\tnil\tKeel\t4.2",
            "false\tbad argument #3 to 'on' (unknown option 'metas' (known: meta))",
        ])
    }

    /// `signalk.units.display(value, meta)`: by the displayUnits the server resolved for the path
    /// (a stored one too), else by its SI units (issue 27).
    func testUnitsDisplayUsesThePathsMeta() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "quiet")
            local function show(...) local text, _, symbol = ...; print(text, symbol) end
            show(signalk.units.display(3.2, assert(boat:meta "navigation.speedOverGround")))
            show(signalk.units.display(12.834, assert(boat:meta "electrical.batteries.house.voltage")))
            show(signalk.units.display(290.15, "K"))
            show(signalk.units.display(1.5708, { units = "rad" }))
            assert(boat:put("environment.unittest.speed.meta",
              { units = "m/s", displayUnits = { category = "speed", targetUnit = "km/h" } }))
            show(signalk.units.display(10, assert(boat:meta "environment.unittest.speed")))
            show(signalk.units.display(1, "furlongs"))
            """)
        XCTAssertEqual(lines, ["6.2 kn\tkn", "12.83 V\tV", "17.0 °C\t°C", "90.0°\t°", "36.0 km/h\tkm/h", "nil\tnil"])
    }

    func testConnectWithProfileAndUnknownProfile() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "boat")
            print(boat:state(), boat:self())
            local none, err = signalk.connect "nope"
            print(none, err.service, err.code, tostring(err):match("no %[signalk.nope%] profile") ~= nil)
            """)
        XCTAssertEqual(lines, ["connected\tvessels.urn:mrn:imo:mmsi:230099999", "nil\tsignalk\tconfig\ttrue"])
    }

    func testGetReadsRelativePathsFromStoreOrREST() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "boat")
            simctl.publish("environment.gettest.depth", 12.5)
            print(assert(boat:get "environment.gettest.depth"))
            print(assert(boat:get "name"))
            print(assert(boat:get(boat:self() .. ".environment.gettest.depth")))
            local v, err = boat:get "environment.gettest.missing"
            print(v, err.service, err.code, err.status)
            """)
        XCTAssertEqual(lines, ["12.5", "Lookout", "12.5", "nil\tsignalk\thttp\t404"])
    }

    func testDeltasReceivePublishedValuesAndBreakStopsTheLoop() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "boat")
            local seen = 0
            -- values published after deltas() returned are seen (earlier ones may be too: they
            -- may still be on their way), so each loop here has paths of its own
            local it, s, c, cursor = boat:deltas { paths = { "environment.deltatest1.*" } }
            print("loops", simctl.loops(boat))
            simctl.publish("environment.deltatest1.a", 1)
            simctl.publish("environment.other.b", 2)
            simctl.publish("environment.deltatest1.c", "three")
            for d in it, s, c, cursor do
              seen = seen + 1
              print(d.path, d.value, d.context == boat:self(), d.source ~= nil, d.timestamp:match("^%d%d%d%d%-%d%d%-%d%dT") ~= nil)
              if seen == 2 then break end
            end
            print("loops", simctl.loops(boat))
            -- runs once the loop below waits for its first value
            task.spawn(simctl.publish, "environment.deltatest2.e", 5)
            for d in boat:deltas { paths = { "environment.deltatest2.*" } } do
              print("second", d.path)
              break
            end
            print("loops", simctl.loops(boat))
            """)
        XCTAssertEqual(lines, [
            "loops\t1",
            "environment.deltatest1.a\t1\ttrue\ttrue\ttrue",
            "environment.deltatest1.c\tthree\ttrue\ttrue\ttrue",
            "loops\t0",
            "second\tenvironment.deltatest2.e",
            "loops\t0",
        ])
    }

    func testOnRunsTheHandlerPerValueAsATask() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "boat")
            local got = {}
            local h = boat:on("environment.ontest.*", function(d)
              -- waiting proves each call is a task of its own
              local v = assert(boat:get(d.path))
              got[#got + 1] = d.path .. "=" .. tostring(d.value)
            end)
            print(h:running(), simctl.loops(boat))
            simctl.publish("environment.ontest.x", 1)
            simctl.publish("environment.elsewhere", 9)
            simctl.publish("environment.ontest.y", 2)
            local spins = 0
            while #got < 2 and spins < 1000000 do spins = spins + 1; task.yield() end
            table.sort(got)
            print(table.concat(got, " "))
            print(h:stop(), h:stop(), h:running())
            task.yield()
            print(simctl.loops(boat))
            """)
        XCTAssertEqual(lines, ["true\t1", "environment.ontest.x=1 environment.ontest.y=2", "true\tfalse\tfalse", "0"])
    }

    /// Handlers start in the order the values arrived, each as a task of its own (one that waits
    /// does not hold up the next), with every field of the delta; the handler's task label names
    /// its pattern.
    func testOnStartsHandlersInArrivalOrder() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "boat")
            local got, first, release = {}, nil, false
            local h = boat:on("environment.ordertest.*", function(d)
              first = first or d
              -- 3 waits until the others are in: each value is a task of its own
              while d.value == 3 and not release do task.yield() end
              got[#got + 1] = d.value
            end)
            for i = 1, 12 do simctl.publish("environment.ordertest.v", i) end
            local spins = 0
            while #got < 11 and spins < 1000000 do spins = spins + 1; task.yield() end
            release = true
            while #got < 12 and spins < 2000000 do spins = spins + 1; task.yield() end
            print(table.concat(got, ","))
            print(first.path, first.context == boat:hello().self, type(first.source), #first.timestamp)
            h:stop()
            """)
        XCTAssertEqual(lines, ["1,2,4,5,6,7,8,9,10,11,12,3", "environment.ordertest.v\ttrue\tstring\t24"])
    }

    /// The README pattern: a `<close>` boat whose handler outlives the main chunk. The host keeps
    /// the boat open while the handler runs (a value published after the chunk ended arrives),
    /// and closes it when the last handler stops.
    func testAToBeClosedBoatStaysOpenWhileItsHandlersRun() async throws {
        let lines = try await run("""
            local boat <close> = assert(signalk.connect "boat")
            local h
            h = boat:on("environment.keepalive.*", function(d)
              print("got", d.path, d.value)
              h:stop()
              print(pcall(boat.get, boat, "name"))
            end)
            task.spawn(function() simctl.publish("environment.keepalive.depth", 4) end)
            print("main chunk ends")
            """)
        XCTAssertEqual(lines, [
            "main chunk ends",
            "got\tenvironment.keepalive.depth\t4",
            "false\tattempt to use a closed signalk boat",
        ])
    }

    func testSubscribeWithPattern() async throws {
        let lines = try await run("""
            simctl.publish("environment.subtest.x", 1)
            -- "quiet" connects with subscribe = "none": nothing arrives until we subscribe
            local boat <close> = assert(signalk.connect "quiet")
            local it = boat:deltas()
            print(boat:subscribe { { path = "environment.subtest.*", policy = "instant", minPeriod = 0 } })
            -- the cached value arrives once the server has taken the subscription
            local d = it()
            print(d.path, d.value)
            simctl.publish("environment.subother.y", 2)
            simctl.publish("environment.subtest.z", 3)
            d = it()
            print(d.path, d.value)
            local rows <close> = assert(signalk.connect { url = URL, subscribe = { "environment.subtest.*", context = "vessels.self" } })
            print(rows:state())
            local quiet <close> = assert(signalk.connect "quiet")
            print(quiet:subscribe { "environment.subtest2.*", { path = "environment.subtest.x", period = 1000 }, context = "vessels.self" })
            print(pcall(quiet.subscribe, quiet, { { path = 1 } }))
            print(pcall(quiet.subscribe, quiet, { { path = "a", policy = "sometimes" } }))
            """)
        XCTAssertEqual(lines.prefix(5), ["true", "environment.subtest.x\t1", "environment.subtest.z\t3", "connected", "true"])
        XCTAssertEqual(lines.count, 7)
        XCTAssertTrue(lines[5].hasPrefix("false\tbad argument #1 to 'signalk.boat:subscribe' (rows[1].path: expected a string)"), lines[5])
        XCTAssertTrue(lines[6].contains("policy: expected \"instant\" or \"fixed\""), lines[6])
    }

    func testSendDeltaAndUnsubscribe() async throws {
        let lines = try await run("""
            simctl.publish("environment.sendtest2.ready", 1)
            local watcher <close> = assert(signalk.connect "quiet")
            local it = watcher:deltas()
            assert(watcher:subscribe { "environment.sendtest.*" })
            local sender <close> = assert(signalk.connect "quiet")
            print(sender:send_delta { path = "environment.sendtest.bg", value = 5.4, source = "lookout.test" })
            local d = it()
            print(d.path, d.value, d.source)
            print(sender:send_delta { values = { ["environment.sendtest.b"] = 2, ["environment.sendtest.a"] = "x" },
                                      timestamp = 1714557600000 })
            local a, b = it(), it()
            print(a.path, a.value, b.path, b.value, a.timestamp)
            print(watcher:unsubscribe())
            assert(watcher:subscribe { "environment.sendtest2.*" })
            print(it().path)  -- the cached value: the server has dropped the old rows by now
            sender:send_delta { values = { { path = "environment.sendtest.late", value = 1 },
                                           { path = "environment.sendtest2.go", value = 2 } } }
            print(it().path)
            print(pcall(sender.send_delta, sender, { path = "environment.x" }))
            print(pcall(sender.send_delta, sender, { path = "environment.x", value = 1, colour = "red" }))
            print(pcall(sender.send_delta, sender, { values = 3 }))
            print(pcall(sender.send_delta, sender, { path = "environment.x", value = 1, timestamp = 1714557600 }))
            print(pcall(watcher.unsubscribe, watcher, 42))
            """)
        XCTAssertEqual(lines.count, 12, "\(lines)")
        XCTAssertEqual(Array(lines.prefix(6)), [
            "true",
            "environment.sendtest.bg\t5.4\tlookout.test",
            "true",
            "environment.sendtest.a\tx\tenvironment.sendtest.b\t2\t2024-05-01T10:00:00.000Z",
            "true",
            "environment.sendtest2.ready",
        ])
        XCTAssertEqual(lines[6], "environment.sendtest2.go")
        XCTAssertTrue(lines[7].contains("opts.value: required (json.null clears a value)"), lines[7])
        XCTAssertTrue(lines[8].contains("unknown option 'colour'"), lines[8])
        XCTAssertTrue(lines[9].contains("opts.values: expected a list of {path, value} or a table of path = value"), lines[9])
        XCTAssertTrue(lines[10].contains("looks like seconds"), lines[10])
        XCTAssertTrue(lines[11].contains("paths: expected a path, a list of paths, or nothing for all, got number"), lines[11])
    }

    func testABadTokenIsAnAuthError() async throws {
        let secure = try await SignalKSecureModuleSim.shared.base()
        let lines = try await run("""
            local boat, err = signalk.connect { url = "\(secure.absoluteString)", token = "not-a-token-of-this-server", timeout = 10 }
            print(boat, err.code, err.status, err.message)
            print(select(2, pcall(signalk.connect, { url = "\(secure.absoluteString)", token_env = "SK_TOKEN" })))
            """)
        XCTAssertEqual(lines, ["nil\tauth\t401\tnot authorised (HTTP 401): bad auth token",
                               "bad argument #1 to 'signalk.connect' (\(credentialReferenceRefusal("token_env", literal: "token", profileCall: "signalk.connect")))"])
    }

    func testCloseAndToBeClosed() async throws {
        let lines = try await run("""
            local kept
            do
              local boat <close> = assert(signalk.connect "boat")
              kept = boat
              print(kept:state())
            end
            print(pcall(kept.get, kept, "name"))
            kept:close()
            kept:close()
            local boat = assert(signalk.connect "boat")
            local loop = task.spawn(function()
              local n = 0
              for d in boat:deltas() do n = n + 1 end
              return "loop ended"
            end)
            task.yield()
            boat:close()
            print(task.wait(loop, 10))
            print(pcall(boat.get, boat, "name"))
            print(pcall(boat.deltas, boat))
            print(kept:state(), boat:state())
            """)
        XCTAssertEqual(lines, [
            "connected",
            "false\tattempt to use a closed signalk boat",
            "true\tloop ended",
            "false\tattempt to use a closed signalk boat",
            "false\tattempt to use a closed signalk boat",
            "closed\tclosed",
        ])
    }

    func testErrors() async throws {
        let lines = try await run("""
            local ok, msg = pcall(signalk.connect, { url = "ftp://x" })
            print(ok, msg)
            print(pcall(signalk.connect, 42))
            print(pcall(signalk.connect, { url = URL, colour = "red" }))
            -- a closed port: connect itself returns nil, err (the first attempt failed)
            local none, err = signalk.connect { url = "http://127.0.0.1:1", timeout = 10 }
            print(none, err.service, err.code, err.retryable)
            local boat <close> = assert(signalk.connect "boat")
            local r, perr = boat:put("steering.autopilot.target.headingTrue", 1.5)
            print(r, perr.service)
            print(pcall(boat.get, boat, 42))
            print(pcall(boat.on, boat, "x", 1))
            print(pcall(boat.deltas, boat, { paths = { 1 } }))
            """)
        XCTAssertEqual(lines.count, 8, "\(lines)")
        XCTAssertTrue(lines[0].hasPrefix("false\tbad argument #1 to 'signalk.connect' (opts.url: invalid URL: scheme ftp"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("false\tbad argument #1 to 'signalk.connect' (profile name or options table expected, got number)"), lines[1])
        XCTAssertTrue(lines[2].contains("unknown option 'colour'"), lines[2])
        XCTAssertEqual(lines[3], "nil\tsignalk\tnetwork\ttrue")
        XCTAssertEqual(lines[4], "nil\tsignalk")
        XCTAssertTrue(lines[5].hasPrefix("false\tbad argument #1 to 'signalk.boat:get' (string expected, got number)"), lines[5])
        XCTAssertTrue(lines[6].hasPrefix("false\t") && lines[6].contains("bad argument #2 to 'on' (function expected, got number)"), lines[6])
        XCTAssertTrue(lines[7].contains("opts.paths[1]: expected a string"), lines[7])
    }

    func testUnitsAndDiscover() async throws {
        let lines = try await run("""
            local u = signalk.units
            print(u.rad_to_deg(math.pi), u.deg_to_rad(180) == math.pi)
            print(string.format("%.4f %.4f", u.ms_to_knots(1), u.knots_to_ms(1)))
            print(string.format("%.2f %.2f", u.k_to_c(300), u.c_to_k(0)))
            local found, err = signalk.discover { timeout = 0.2 }
            print(type(found) == "table" or err.service == "signalk")
            """)
        XCTAssertEqual(lines, ["180.0\ttrue", "1.9438 0.5144", "26.85 273.15", "true"])
    }
}
