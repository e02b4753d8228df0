import Foundation
import LookoutSim
import SignalKKit
import XCTest

/// One simulator for the whole test process, never stopped (stopping Hummingbird while a connection
/// arrives can trap in NIO). Driven by hand (`autoTick: false`) with a simulated clock.
actor SignalKNetSim {
    static let shared = SignalKNetSim()
    struct Running: Sendable {
        let sim: SignalKSimulator
        let clock: SimulatedClock
        let base: URL
    }
    private var running: Running?

    func get() async throws -> Running {
        if let running { return running }
        let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
        let sim = try SignalKSimulator(
            options: .init(rate: 10, seed: 11, selfMMSI: "230099999", clock: clock.now, autoTick: false))
        let r = Running(sim: sim, clock: clock, base: try await sim.start())
        running = r
        return r
    }

    /// Advances the clock by one step (0.1 s at rate 10) and ticks; serialised through the actor.
    func tick(_ n: Int = 1) async throws {
        let r = try await get()
        for _ in 0..<n {
            r.clock.advance(by: 0.1)
            await r.sim.tick()
        }
    }
}

/// Waits until `condition` holds, checking every 10 ms, failing after `timeout` seconds.
func waitUntil(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
               _ condition: @Sendable () async -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !(await condition()) {
        if Date() > deadline {
            XCTFail("timed out waiting for \(what)", file: file, line: line)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Records every event of one stream consumer.
actor SignalKEventLog {
    private(set) var deltas: [SignalKDelta] = []
    private(set) var warnings: [String] = []
    private(set) var states: [SignalKConnectionState] = []
    private(set) var refusals: [SignalKClientError] = []
    private var task: Task<Void, Never>?

    func attach(_ stream: SignalKStream) async {
        let events = await stream.events()
        task = Task { for await e in events { self.record(e) } }
    }

    private func record(_ e: SignalKStreamEvent) {
        switch e {
        case .delta(let d, _): deltas.append(d)
        case .warning(let w): warnings.append(w)
        case .state(let s): states.append(s)
        case .unauthorized(let e): refusals.append(e)
        default: break
        }
    }

    /// (timestamp, path, source) of every value received for `path`.
    func values(_ path: String) -> [(Date?, String, String?)] {
        deltas.flatMap { d in d.updates.flatMap { u in u.values.filter { $0.path == path }.map { (u.timestamp, $0.path, u.sourceRef) } } }
    }

    func count(_ path: String) -> Int { values(path).count }
}

final class SignalKStreamTests: XCTestCase {
    func makeStream(_ base: URL, dedupe: Bool = true) async throws -> (SignalKStream, SignalKEventLog) {
        var config = try SignalKStreamConfiguration(url: base)
        config.initialBackoff = .milliseconds(50)
        config.maxBackoff = .milliseconds(400)
        config.deduplicate = dedupe
        let stream = SignalKStream(configuration: config)
        let log = SignalKEventLog()
        await log.attach(stream)
        await stream.start()
        try await waitUntil("hello") { await stream.helloCount >= 1 }
        return (stream, log)
    }

    func testConfigurationURLs() throws {
        let c = try SignalKStreamConfiguration(url: URL(string: "https://boat.local:3443")!)
        XCTAssertEqual(c.url.absoluteString, "wss://boat.local:3443/signalk/v1/stream")
        XCTAssertEqual(c.connectURL().absoluteString, "wss://boat.local:3443/signalk/v1/stream?subscribe=none")
        var d = try SignalKStreamConfiguration(url: URL(string: "ws://10.0.0.1:3000/signalk/v1/stream?x=1")!)
        d.subscribe = .all
        d.sendCachedValues = false
        d.sendMeta = true
        d.tokenInQuery = true
        XCTAssertEqual(d.connectURL(token: "T").absoluteString,
                       "ws://10.0.0.1:3000/signalk/v1/stream?subscribe=all&sendCachedValues=false&sendMeta=all&token=T")
        XCTAssertThrowsError(try SignalKStreamConfiguration(url: URL(string: "ftp://x/")!))
        // Backoff: doubles, capped, jitter bounded.
        XCTAssertEqual(d.backoff(attempt: 1, random: 0), .seconds(1))
        XCTAssertEqual(d.backoff(attempt: 3, random: 0), .seconds(4))
        XCTAssertEqual(d.backoff(attempt: 10, random: 0), .seconds(30))
        XCTAssertEqual(d.backoff(attempt: 1, random: 1), .milliseconds(1200))
        XCTAssertEqual(d.backoff(attempt: 1, random: -1), .milliseconds(800))
    }

    func testHelloAndDeltasArriveInStore() async throws {
        let r = try await SignalKNetSim.shared.get()
        let (stream, log) = try await makeStream(r.base)
        let hello = await stream.hello
        XCTAssertEqual(hello?.name, "signalk-server")
        XCTAssertEqual(hello?.selfContext, r.sim.selfContext)
        let selfCtx = await stream.store.selfContext
        XCTAssertEqual(selfCtx, r.sim.selfContext)
        if case .connected = await stream.state {} else { XCTFail("not connected") }

        await stream.subscribe([SignalKSubscription(path: "navigation.*", policy: .instant)])
        // Immediate replay of cached values.
        try await waitUntil("replayed SOG") { await stream.store.value("navigation.speedOverGround") != nil }
        let before = await log.count("navigation.speedOverGround")
        try await SignalKNetSim.shared.tick(3)
        try await waitUntil("3 live SOG deltas") { await log.count("navigation.speedOverGround") >= before + 3 }
        let leaf = await stream.store.leaf("navigation.speedOverGround")
        XCTAssertEqual(leaf?.context, r.sim.selfContext)
        XCTAssertNotNil(leaf?.timestamp)
        await stream.close()
        let st = await stream.state
        XCTAssertEqual(st, .closed)
    }

    func testSubscribeWithPeriodBatchesValues() async throws {
        let r = try await SignalKNetSim.shared.get()
        let (stream, log) = try await makeStream(r.base)
        let path = "navigation.courseOverGroundTrue"
        await stream.subscribe([SignalKSubscription(path: path, period: .seconds(1), policy: .fixed)])
        await stream.subscribe([SignalKSubscription(path: "navigation.position", policy: .instant)])  // marker
        try await waitUntil("replay") { await log.count("navigation.position") >= 1 }
        let before = await log.count(path)
        // 3 s of data at 10 Hz: 30 values, but a 1 s window sends only the latest per window.
        try await SignalKNetSim.shared.tick(30)
        try await waitUntil("windows flushed") { await log.count(path) >= before + 2 }
        let markerBefore = await log.count("navigation.position")
        try await SignalKNetSim.shared.tick(1)
        try await waitUntil("marker") { await log.count("navigation.position") > markerBefore }
        let got = await log.count(path) - before
        XCTAssertTrue((2...4).contains(got), "expected about 3 windowed values, got \(got)")
        let subs = await stream.subscriptions
        XCTAssertEqual(subs.count, 2)
        XCTAssertEqual(subs.first?.subscription.period, .seconds(1))
        await stream.close()
    }

    func testUnsubscribeStopsPath() async throws {
        let r = try await SignalKNetSim.shared.get()
        let (stream, log) = try await makeStream(r.base)
        let a = "navigation.speedOverGround", b = "navigation.courseOverGroundTrue"
        await stream.subscribe([SignalKSubscription(path: a, policy: .instant), SignalKSubscription(path: b, policy: .instant)])
        // Re-subscribing the same row is a no-op (nothing sent).
        let sent = await stream.subscribeMessagesSent
        await stream.subscribe([SignalKSubscription(path: a, policy: .instant)])
        let sentAfter = await stream.subscribeMessagesSent
        XCTAssertEqual(sentAfter, sent)
        try await waitUntil("replay a+b") { let x = await log.count(a); let y = await log.count(b); return x >= 1 && y >= 1 }

        await stream.unsubscribe(paths: [b])
        // A marker subscription: its replay proves the server handled the unsubscribe before it.
        await stream.subscribe([SignalKSubscription(path: "navigation.position", policy: .instant)])
        try await waitUntil("marker replay") { await log.count("navigation.position") >= 1 }
        let bBefore = await log.count(b), aBefore = await log.count(a)
        try await SignalKNetSim.shared.tick(2)
        try await waitUntil("a live") { await log.count(a) >= aBefore + 2 }
        let bAfter = await log.count(b)
        XCTAssertEqual(bAfter, bBefore, "no value for the unsubscribed path")
        let paths = await stream.subscriptions.map(\.subscription.path)
        XCTAssertEqual(paths, [a, "navigation.position"])
        await stream.close()
    }

    func testReconnectRestoresSubscriptionsExactlyOnce() async throws {
        let r = try await SignalKNetSim.shared.get()
        let (stream, log) = try await makeStream(r.base)
        let a = "navigation.speedOverGround", b = "navigation.headingTrue"
        await stream.subscribe([SignalKSubscription(path: a, policy: .instant), SignalKSubscription(path: b, policy: .instant)])
        try await waitUntil("replay") { await log.count(a) >= 1 }
        try await SignalKNetSim.shared.tick(2)
        try await waitUntil("live before drop") { await log.count(a) >= 3 }

        await r.sim.dropAllConnections()
        try await waitUntil("reconnected") { await stream.helloCount >= 2 }
        // Marker: a new row sent after the restored ones; its replay proves they were processed.
        await stream.subscribe([SignalKSubscription(path: "navigation.position", policy: .instant)])
        try await waitUntil("marker replay") { await log.count("navigation.position") >= 1 }
        let aBefore = await log.count(a), bBefore = await log.count(b)
        let suppressedBefore = await stream.suppressedDuplicateCount
        try await SignalKNetSim.shared.tick(5)
        try await waitUntil("5 live values each") {
            let x = await log.count(a); let y = await log.count(b); return x >= aBefore + 5 && y >= bBefore + 5
        }
        // One more tick as a barrier: any duplicate of the first 5 would have arrived before it.
        try await SignalKNetSim.shared.tick(1)
        try await waitUntil("barrier") {
            let x = await log.count(a); let y = await log.count(b); return x >= aBefore + 6 && y >= bBefore + 6
        }
        let aN = await log.count(a), bN = await log.count(b), supp = await stream.suppressedDuplicateCount
        XCTAssertEqual(aN, aBefore + 6)
        XCTAssertEqual(bN, bBefore + 6)
        XCTAssertEqual(supp, suppressedBefore, "server sent no duplicates")
        for p in [a, b] {
            let keys = await log.values(p).map { "\($0.0?.timeIntervalSince1970 ?? -1)|\($0.1)|\($0.2 ?? "")" }
            XCTAssertEqual(Set(keys).count, keys.count, "duplicate deltas for \(p)")
        }
        // 2 restored rows in one message + the marker, after the first connection's messages.
        let sentN = await stream.subscribeMessagesSent
        XCTAssertEqual(sentN, 3)
        await stream.close()
    }

    func testRestartResubscribesAndWithoutDedupeSeesReplay() async throws {
        let r = try await SignalKNetSim.shared.get()
        let (stream, log) = try await makeStream(r.base, dedupe: false)
        let a = "navigation.speedOverGround"
        await stream.subscribe([SignalKSubscription(path: a, policy: .instant)])
        try await waitUntil("replay") { await log.count(a) >= 1 }
        let id1 = await stream.hello?.serverStartId
        await r.sim.restart()
        try await waitUntil("reconnected") { await stream.helloCount >= 2 }
        let id2 = await stream.hello?.serverStartId
        XCTAssertNotEqual(id1, id2)
        // The restored subscription replays the cached value (visible without dedupe) …
        try await waitUntil("replay after restart") { await log.count(a) >= 2 }
        let n = await log.count(a)
        try await SignalKNetSim.shared.tick(2)
        // … and then each tick arrives exactly once.
        try await waitUntil("live") { await log.count(a) >= n + 2 }
        try await SignalKNetSim.shared.tick(1)
        try await waitUntil("barrier") { await log.count(a) >= n + 3 }
        let final = await log.count(a)
        XCTAssertEqual(final, n + 3)
        await stream.close()
    }

    /// The simulator has no security: a token (header or query form) must simply not break the connection.
    func testConnectsWithTokenHeaderAndQuery() async throws {
        let r = try await SignalKNetSim.shared.get()
        for inQuery in [false, true] {
            var config = try SignalKStreamConfiguration(url: r.base)
            config.tokenInQuery = inQuery
            let stream = SignalKStream(configuration: config, tokenProvider: { "eyJtest.token.sig" })
            await stream.start()
            try await waitUntil("hello") { await stream.helloCount >= 1 }
            await stream.close()
        }
    }

    func testCloseEndsEventsAndIgnoresLaterSubscribe() async throws {
        let r = try await SignalKNetSim.shared.get()
        let (stream, _) = try await makeStream(r.base)
        let events = await stream.events()
        await stream.close()
        var last: SignalKStreamEvent?
        for await e in events { last = e }
        if case .state(.closed)? = last {} else { XCTFail("last event should be .closed, got \(String(describing: last))") }
        await stream.subscribe([SignalKSubscription(path: "x")])
        let ok = await stream.send("{}")
        XCTAssertFalse(ok)
    }
}
