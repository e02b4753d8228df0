import AsyncHTTPClient
import Foundation
import Logging
import LookoutSim
import LookoutTestSupport
import NIOCore
import WSClient
import XCTest
import LookoutWire

/// Simulators shared by the whole test process and never stopped (stopping Hummingbird while a
/// connection arrives can trap in NIO). Both are driven by hand (`autoTick: false`) with a
/// simulated clock, so timing assertions count messages, not wall time.
actor SKSharedSims {
    static let shared = SKSharedSims()
    struct Running: Sendable {
        let sim: SignalKSimulator
        let clock: SimulatedClock
        let base: URL
    }
    private var main: Running?
    private var playback: Running?

    func boat() async throws -> Running {
        if let main { return main }
        let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
        let sim = try SignalKSimulator(
            options: .init(rate: 10, seed: 7, selfMMSI: "230099999", clock: clock.now, autoTick: false))
        let r = Running(sim: sim, clock: clock, base: try await sim.start())
        main = r
        return r
    }

    /// A playback simulator over a JSON-lines file made at run time from the shared fixtures.
    func recorded(lines: String) async throws -> Running {
        if let playback { return playback }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("signalk-playback-\(getpid()).jsonl")
        try lines.write(to: file, atomically: true, encoding: .utf8)
        let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
        let sim = try SignalKSimulator(
            options: .init(playback: file, rewritePlaybackTimestamps: false, clock: clock.now, autoTick: false))
        let r = Running(sim: sim, clock: clock, base: try await sim.start())
        playback = r
        return r
    }
}

/// Text frames received by a test socket; `next` waits with a safety timeout (not for sync).
actor SKInbox {
    private var buffer: [String] = []
    private var waiter: (id: Int, cont: CheckedContinuation<String?, Never>)?
    private var closed = false
    private var counter = 0

    func push(_ s: String) {
        if let w = waiter {
            waiter = nil
            w.cont.resume(returning: s)
        } else {
            buffer.append(s)
        }
    }

    func finish() {
        closed = true
        if let w = waiter {
            waiter = nil
            w.cont.resume(returning: nil)
        }
    }

    func next(timeout: Double = 10) async -> String? {
        if !buffer.isEmpty { return buffer.removeFirst() }
        if closed { return nil }
        counter += 1
        let id = counter
        return await withCheckedContinuation { c in
            waiter = (id, c)
            Task {
                try? await Task.sleep(for: .seconds(timeout))
                self.expire(id)
            }
        }
    }

    private func expire(_ id: Int) {
        if let w = waiter, w.id == id {
            waiter = nil
            w.cont.resume(returning: nil)
        }
    }
}

/// A WebSocket client (WSClient) feeding an inbox.
final class SKTestSocket: Sendable {
    let inbox = SKInbox()
    private let out: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    init(_ url: String) {
        let (stream, cont) = AsyncStream<String>.makeStream()
        out = cont
        let inbox = self.inbox
        task = Task {
            do {
                try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Logger(label: "sk-test")
                ) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                if case .text(let s) = message { await inbox.push(s) }
                            }
                        }
                        group.addTask {
                            for await s in stream { try await outbound.write(.text(s)) }
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
            } catch {}
            await inbox.finish()
        }
    }

    func send(_ v: JSONValue) { out.yield(v.jsonString) }
    func next() async -> String? { await inbox.next() }
    func nextJSON() async -> JSONValue? {
        guard let s = await next() else { return nil }
        return try? JSONValue.parse(s)
    }
    func close() async {
        out.finish()
        await task.value
    }
}

final class SignalKSimulatorTests: XCTestCase {
    let selfContext = "vessels.urn:mrn:imo:mmsi:230099999"

    func unwrap<T>(_ v: T?, file: StaticString = #filePath, line: UInt = #line) throws -> T {
        try XCTUnwrap(v, file: file, line: line)
    }

    func get(_ base: URL, _ path: String, headers: [(String, String)] = []) async throws -> (Int, JSONValue?, String) {
        var req = HTTPClientRequest(url: base.absoluteString + path)
        for (k, v) in headers { req.headers.add(name: k, value: v) }
        let resp = try await HTTPClient.shared.execute(req, timeout: .seconds(20))
        let buf = try await resp.body.collect(upTo: 10 * 1024 * 1024)
        let data = Data(buffer: buf)
        return (Int(resp.status.code), try? JSONValue.parse(data), String(decoding: data, as: UTF8.self))
    }

    func wsURL(_ base: URL, _ query: String) -> String {
        "ws://127.0.0.1:\(base.port!)/signalk/v1/stream" + (query.isEmpty ? "" : "?" + query)
    }

    /// The single value of a subscription-style delta: (path, value).
    func single(_ d: JSONValue) -> (String, JSONValue)? {
        guard let ups = d["updates"]?.arrayValue, ups.count == 1, let vals = ups[0]["values"]?.arrayValue,
            vals.count == 1, let path = vals[0]["path"]?.stringValue
        else { return nil }
        return (path, vals[0]["value"] ?? .null)
    }

    /// Ticks `n` times, advancing the shared clock `dt` seconds before each.
    func run(_ r: SKSharedSims.Running, ticks n: Int, dt: Double = 0.1) async {
        for _ in 0..<n {
            r.clock.advance(by: dt)
            await r.sim.tick()
        }
    }

    /// Synchronises with the server: publishes a value under a unique path of a test-only vessel,
    /// subscribes to it and collects every frame up to its replay. Everything the server queued
    /// before it handled this message has then arrived (one ordered socket); the marker's own
    /// frames are not returned. Only for sockets without `subscribe=all` (those would also get the
    /// marker's live delta before the subscription is handled).
    func drain(_ ws: SKTestSocket, _ r: SKSharedSims.Running) async -> [JSONValue] {
        let context = "vessels.urn:mrn:imo:mmsi:000000001"
        let path = "test.marker.m\(UInt32.random(in: 0...UInt32.max))"
        await r.sim.publish(["context": .string(context), "updates": [["values": [["path": .string(path), "value": 1]]]]])
        ws.send(["context": .string(context), "subscribe": [["path": .string(path), "policy": "instant"]]])
        var seen: [JSONValue] = []
        while let s = await ws.next() {
            let v = (try? JSONValue.parse(s)) ?? .string(s)
            if v["context"]?.stringValue == context {
                if single(v)?.0 == path { return seen }
                continue
            }
            seen.append(v)
        }
        XCTFail("socket ended before the marker \(path)")
        return seen
    }

    // MARK: discovery and REST

    func testDiscoveryDocument() async throws {
        let r = try await SKSharedSims.shared.boat()
        let port = r.base.port!
        let (status, doc, _) = try await get(r.base, "/signalk")
        XCTAssertEqual(status, 200)
        let v1 = doc?["endpoints"]?["v1"]
        XCTAssertEqual(v1?["signalk-http"]?.stringValue, "http://127.0.0.1:\(port)/signalk/v1/api/")
        XCTAssertEqual(v1?["signalk-ws"]?.stringValue, "ws://127.0.0.1:\(port)/signalk/v1/stream")
        XCTAssertEqual(v1?["version"]?.stringValue, "2.31.1")
        XCTAssertNil(v1?["signalk-tcp"])
        XCTAssertEqual(doc?["server"]?["id"]?.stringValue, "signalk-server-node")
        XCTAssertEqual(doc?["server"]?["version"]?.stringValue, "2.31.1")
        let (_, proxied, _) = try await get(r.base, "/signalk", headers: [("X-Forwarded-Proto", "https")])
        XCTAssertEqual(proxied?["endpoints"]?["v1"]?["signalk-ws"]?.stringValue, "wss://127.0.0.1:\(port)/signalk/v1/stream")
    }

    func testRESTFullModelAndSubPaths() async throws {
        let r = try await SKSharedSims.shared.boat()
        let (status, model, _) = try await get(r.base, "/signalk/v1/api/")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(model?["self"]?.stringValue, selfContext)
        XCTAssertEqual(model?["version"]?.stringValue, "0.1.0")
        let vessel = model?["vessels"]?["urn:mrn:imo:mmsi:230099999"]
        XCTAssertEqual(vessel?["mmsi"]?.stringValue, "230099999")
        XCTAssertNotNil(vessel?["navigation"]?["position"]?["value"]?["latitude"]?.doubleValue)
        XCTAssertNotNil(model?["sources"]?["can0"])

        let (s1, pos, _) = try await get(r.base, "/signalk/v1/api/vessels/self/navigation/position")
        XCTAssertEqual(s1, 200)
        XCTAssertEqual(pos?["$source"]?.stringValue, "can0.3")
        XCTAssertEqual(pos?["pgn"]?.doubleValue, 129025)
        XCTAssertTrue(pos?["timestamp"]?.stringValue?.hasSuffix("Z") ?? false)
        let lat = try XCTUnwrap(pos?["value"]?["latitude"]?.doubleValue)
        XCTAssertEqual(lat, 60.15, accuracy: 0.1)

        let (s2, inner, _) = try await get(r.base, "/signalk/v1/api/vessels/self/navigation/position/value")
        XCTAssertEqual(s2, 200)
        XCTAssertNotNil(inner?["longitude"]?.doubleValue)
        let (s3, byURN, _) = try await get(r.base, "/signalk/v1/api/vessels/urn:mrn:imo:mmsi:230099999/environment/depth/belowTransducer")
        XCTAssertEqual(s3, 200)
        XCTAssertNotNil(byURN?["value"]?.doubleValue)
        let (s4, selfRef, _) = try await get(r.base, "/signalk/v1/api/self")
        XCTAssertEqual(s4, 200)
        XCTAssertEqual(selfRef?.stringValue, selfContext)
        let (s5, ownVessel, _) = try await get(r.base, "/signalk/v1/api/vessels/self")
        XCTAssertEqual(s5, 200)
        XCTAssertEqual(ownVessel?["name"]?.stringValue, "Lookout")
        let (s6, _, _) = try await get(r.base, "/signalk/v1/api/vessels/self/navigation/noSuchThing")
        XCTAssertEqual(s6, 404)
        let (s7, _, _) = try await get(r.base, "/signalk/v1/api")
        XCTAssertEqual(s7, 404)
    }

    // MARK: stream

    func testStreamHelloThenCachedThenDeltasWithSubscribeSelf() async throws {
        let r = try await SKSharedSims.shared.boat()
        let ws = SKTestSocket(wsURL(r.base, "subscribe=self"))
        let hello = try await unwrap(ws.nextJSON())
        XCTAssertEqual(hello["name"]?.stringValue, "signalk-server")
        XCTAssertEqual(hello["version"]?.stringValue, "2.31.1")
        XCTAssertEqual(hello["self"]?.stringValue, selfContext)
        XCTAssertEqual(hello["roles"], JSONValue.array(["master", "main"]))
        XCTAssertTrue(hello["timestamp"]?.stringValue?.hasSuffix("Z") ?? false)
        XCTAssertFalse(hello["serverStartId"]?.stringValue?.isEmpty ?? true)
        XCTAssertNil(hello["updates"])

        await run(r, ticks: 1)
        var cached: [JSONValue] = []
        var live: JSONValue?
        while let d = await ws.nextJSON() {
            if single(d) != nil { cached.append(d) } else { live = d; break }
        }
        // Cached values: one value per delta, oldest first, every path of the boat.
        let paths = Set(cached.compactMap { single($0)?.0 })
        XCTAssertTrue(paths.isSuperset(of: ["navigation.position", "navigation.speedOverGround", "environment.depth.belowTransducer",
            "environment.wind.angleApparent", "environment.water.temperature", "electrical.batteries.house.voltage",
            "notifications.navigation.anchor"]), "\(paths)")
        let stamps = cached.compactMap { $0["updates"]?.arrayValue?.first?["timestamp"]?.stringValue }
        XCTAssertEqual(stamps, stamps.sorted())
        // The live delta: as the producer built it, context resolved, source and $source on every update.
        let delta = try XCTUnwrap(live)
        XCTAssertEqual(delta["context"]?.stringValue, selfContext)
        let updates = try XCTUnwrap(delta["updates"]?.arrayValue)
        XCTAssertGreaterThan(updates.count, 1)
        for u in updates {
            XCTAssertNotNil(u["source"]?["label"])
            XCTAssertNotNil(u["$source"]?.stringValue)
            XCTAssertTrue(u["timestamp"]?.stringValue?.hasSuffix("Z") ?? false)
            XCTAssertNil(u["path"])
        }
        await ws.close()
    }

    func testSubscribePeriodDeliversAboutOncePerPeriod() async throws {
        let r = try await SKSharedSims.shared.boat()
        let ws = SKTestSocket(wsURL(r.base, "subscribe=none"))
        let hello = try await unwrap(ws.nextJSON())
        XCTAssertNotNil(hello["roles"])
        ws.send([
            "context": "vessels.self",
            "subscribe": [["path": "navigation.speedOverGround", "period": 500, "policy": "fixed"]],
        ])
        // Immediate replay of the cached value (and nothing else: subscribe=none).
        let replay = try await unwrap(ws.nextJSON())
        XCTAssertEqual(single(replay)?.0, "navigation.speedOverGround")
        XCTAssertEqual(replay["context"]?.stringValue, selfContext)

        await run(r, ticks: 50, dt: 0.1)  // 5 s of simulated time at 10 Hz
        let got = await drain(ws, r)
        XCTAssertTrue(got.allSatisfy { single($0)?.0 == "navigation.speedOverGround" }, "\(got)")
        XCTAssertTrue((9...11).contains(got.count), "expected about 10 windows of 500 ms, got \(got.count)")

        // minPeriod: instant, values within 300 ms of the last send are dropped.
        ws.send(["context": "vessels.self", "subscribe": [["path": "navigation.headingTrue", "policy": "instant", "minPeriod": 300]]])
        let headingReplay = try unwrap(await ws.nextJSON())  // the subscription is registered
        XCTAssertEqual(single(headingReplay)?.0, "navigation.headingTrue")
        await run(r, ticks: 30, dt: 0.1)
        let headings = await drain(ws, r)
            .filter { single($0)?.0 == "navigation.headingTrue" }
        // about 3 s / 300 ms (the first value goes out at once, later ones only 300 ms apart)
        XCTAssertTrue((7...11).contains(headings.count), "got \(headings.count)")

        // Unsupported policy: warning string frame, values still flow instantly.
        ws.send(["context": "vessels.self", "subscribe": [["path": "electrical.batteries.house.voltage", "policy": "ideal"]]])
        let warning = await ws.next()
        XCTAssertEqual(warning, #""Only 'instant' and 'fixed' policies supported, ignoring policy ideal""#)
        await ws.close()
    }

    func testUnsubscribeOnlyWildcardFormWorks() async throws {
        let r = try await SKSharedSims.shared.boat()
        let ws = SKTestSocket(wsURL(r.base, ""))  // default subscribe=self
        _ = try await unwrap(ws.nextJSON())
        ws.send(["context": "*", "unsubscribe": [["path": "*"]]])
        _ = await drain(ws, r)
        // After it the implicit stream is gone: ticks yield only what new subscriptions ask for.
        ws.send(["context": "vessels.self", "subscribe": [["path": "environment.depth.belowTransducer"]]])
        let replay = try unwrap(await ws.nextJSON())  // the subscription is registered
        XCTAssertEqual(single(replay)?.0, "environment.depth.belowTransducer")
        await run(r, ticks: 2)
        let after = await drain(ws, r)
        XCTAssertEqual(after.count, 2, "2 depth values expected: \(after)")
        XCTAssertTrue(after.allSatisfy { single($0)?.0 == "environment.depth.belowTransducer" })

        // Any other unsubscribe: the error string, then the socket is closed.
        ws.send(["context": "vessels.self", "unsubscribe": [["path": "navigation.position"]]])
        let error = try await unwrap(ws.next())
        let text = try XCTUnwrap(try JSONValue.parse(error).stringValue)
        XCTAssertTrue(text.hasPrefix(#"Only '{"context":"*","unsubscribe":[{"path":"*"}]}' supported, received "#), text)
        let end = await ws.next()
        XCTAssertNil(end, "the socket should be closed")
        await ws.close()
    }

    func testFaultsRestartAndMalformedFrame() async throws {
        let r = try await SKSharedSims.shared.boat()
        let ws = SKTestSocket(wsURL(r.base, "subscribe=none"))
        let hello1 = try await unwrap(ws.nextJSON())
        _ = await drain(ws, r)  // the server has registered this socket
        await r.sim.sendMalformedFrame()
        let bad = try await unwrap(ws.next())
        XCTAssertThrowsError(try JSONValue.parse(bad))
        await r.sim.restart()
        let end = await ws.next()
        XCTAssertNil(end)
        await ws.close()
        let ws2 = SKTestSocket(wsURL(r.base, "subscribe=none"))
        let hello2 = try await unwrap(ws2.nextJSON())
        XCTAssertNotEqual(hello1["serverStartId"], hello2["serverStartId"])
        await ws2.close()
    }

    // MARK: playback

    func testPlaybackOfFixtureDeltas() async throws {
        // The shared fixtures (CC BY-SA, never copied into the repo) sit next to the repository.
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/fixtures/signalk").standardizedFileURL
        let names = ["delta-multi-update-with-root-path.json", "delta-notifications.json", "delta-multiple-sources.json"]
        var lines: [String] = []
        for n in names {
            guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(n).path) else {
                throw skipTest("Signal K fixture \(dir.path)/\(n) is missing; playback test needs shared/fixtures/signalk")
            }
            lines.append(try JSONValue.parse(data).jsonString)  // one delta per line
        }
        let r = try await SKSharedSims.shared.recorded(lines: lines.joined(separator: "\n") + "\n")
        // start() played line 1; connect to every context and play lines 2 and 3.
        let ws = SKTestSocket(wsURL(r.base, "subscribe=all"))
        let hello = try await unwrap(ws.nextJSON())
        XCTAssertNotNil(hello["serverStartId"])
        await r.sim.tick()
        await r.sim.tick()
        var frames: [JSONValue] = []
        while frames.filter({ single($0) == nil }).count < 2, let d = await ws.nextJSON() { frames.append(d) }
        let cachedPaths = Set(frames.compactMap { single($0)?.0 })
        // Line 1's root-path value is flattened for the cache (`name`).
        XCTAssertTrue(cachedPaths.isSuperset(of: ["propulsion.0.revolutions", "navigation.speedOverGround", "name"]), "\(cachedPaths)")
        let live = frames.filter { single($0) == nil }
        XCTAssertEqual(live[0]["context"]?.stringValue, "vessels.urn:mrn:signalk:uuid:c0d79334-4e25-4245-8892-54e8ccc8021d")
        XCTAssertEqual(live[0]["updates"]?.arrayValue?.first?["values"]?.arrayValue?.first?["path"]?.stringValue, "notifications.mob")
        XCTAssertEqual(live[1]["updates"]?.arrayValue?.count, 2)
        XCTAssertEqual(live[1]["updates"]?.arrayValue?.first?["$source"]?.stringValue != nil, true)

        // The model: root-path merge and two sources for one path.
        let (_, model, _) = try await get(r.base, "/signalk/v1/api/")
        XCTAssertEqual(model?["vessels"]?["urn:mrn:imo:mmsi:234567890"]?["name"]?.stringValue, "WRANGO")
        let cog = model?["vessels"]?["urn:mrn:signalk:uuid:c0d79334-4e25-4245-8892-54e8ccc8021d"]?["navigation"]?["courseOverGroundTrue"]
        XCTAssertEqual(cog?["values"]?.objectValue?.count, 2, "\(String(describing: cog))")
        await ws.close()
    }
}
