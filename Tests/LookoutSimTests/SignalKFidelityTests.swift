import AsyncHTTPClient
import Foundation
import LookoutSim
import LookoutWire
import NIOCore
import NIOHTTP1
import XCTest

/// A simulator with PUT handlers, shared by the process and never stopped: `anchorLight` completes
/// at once, `deck` stays PENDING until the test completes it.
actor SKPutSim {
    static let shared = SKPutSim()
    private var running: (sim: SignalKSimulator, base: URL)?

    func get() async throws -> (sim: SignalKSimulator, base: URL) {
        if let running { return running }
        let sim = try SignalKSimulator(options: .init(
            seed: 3, autoTick: false,
            putHandlers: [
                "electrical.switches.anchorLight.state": { _ in .completed(statusCode: 200) },
                "electrical.switches.deck.state": { _ in .pending },
            ]))
        let r = (sim, try await sim.start())
        running = r
        return r
    }
}

/// Edges where the Signal K simulator must behave as signalk-server 2.x does (issue 17).
final class SignalKFidelityTests: XCTestCase {
    func http(_ method: HTTPMethod, _ base: URL, _ path: String, body: String? = nil) async throws -> (Int, JSONValue?, String) {
        var req = HTTPClientRequest(url: base.absoluteString + path)
        req.method = method
        if let body {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: body))
        }
        let resp = try await HTTPClient.shared.execute(req, timeout: .seconds(20))
        let data = Data(buffer: try await resp.body.collect(upTo: 1 << 20))
        return (Int(resp.status.code), try? JSONValue.parse(data), String(decoding: data, as: UTF8.self))
    }

    func socket(_ base: URL, _ query: String) async throws -> SKTestSocket {
        let ws = SKTestSocket("ws://127.0.0.1:\(base.port!)/signalk/v1/stream?\(query)")
        let helloFrame = await ws.nextJSON()
        let hello = try XCTUnwrap(helloFrame)
        XCTAssertEqual(hello["name"], "signalk-server")
        return ws
    }

    /// The next frame that carries `requestId` (other frames are skipped).
    func reply(_ ws: SKTestSocket, _ requestId: String) async -> JSONValue? {
        while let v = await ws.nextJSON() {
            if v["requestId"]?.stringValue == requestId { return v }
        }
        return nil
    }

    // MARK: PUT

    func testHTTPPutToAPathNoHandlerServesIs405() async throws {
        let r = try await SKSharedSims.shared.boat()
        let (status, body, _) = try await http(
            .PUT, r.base, "/signalk/v1/api/vessels/self/electrical/switches/nothing/state", body: #"{"value":1}"#)
        XCTAssertEqual(status, 405)
        XCTAssertEqual(body?["state"], "COMPLETED")
        XCTAssertEqual(body?["statusCode"], 405)
        XCTAssertEqual(body?["message"], "PUT not supported for electrical.switches.nothing.state")
        let href = try XCTUnwrap(body?["href"]?.stringValue)
        let (pollStatus, polled, _) = try await http(.GET, r.base, href)
        XCTAssertEqual(pollStatus, 200)
        XCTAssertEqual(polled, body)
    }

    func testWebSocketPutToAPathNoHandlerServesIsCompleted405() async throws {
        let r = try await SKSharedSims.shared.boat()
        let ws = try await socket(r.base, "subscribe=none")
        let id = UUID().uuidString.lowercased()
        ws.send(["requestId": .string(id), "context": "vessels.self", "put": ["path": "electrical.switches.nothing.state", "value": 1]])
        let gotFrame = await reply(ws, id)
        let got = try XCTUnwrap(gotFrame)
        XCTAssertEqual(got["state"], "COMPLETED")
        XCTAssertEqual(got["statusCode"], 405)
        XCTAssertEqual(got["message"], "PUT not supported for electrical.switches.nothing.state")
        XCTAssertEqual(got["href"]?.stringValue, "/signalk/v1/requests/\(id)")
        await ws.close()
    }

    func testWebSocketPutToHandledPathsRepliesAndIsPollable() async throws {
        let r = try await SKPutSim.shared.get()
        let ws = try await socket(r.base, "subscribe=none")
        let sync = "sync-" + UUID().uuidString.lowercased()
        ws.send(["requestId": .string(sync), "context": "vessels.self", "put": ["path": "electrical.switches.anchorLight.state", "value": 1]])
        let doneFrame = await reply(ws, sync)
        let done = try XCTUnwrap(doneFrame)
        XCTAssertEqual(done["state"], "COMPLETED")
        XCTAssertEqual(done["statusCode"], 200)
        let (s1, polled1, _) = try await http(.GET, r.base, "/signalk/v1/requests/\(sync)")
        XCTAssertEqual(s1, 200)
        XCTAssertEqual(polled1?["state"], "COMPLETED")

        let slow = "slow-" + UUID().uuidString.lowercased()
        ws.send(["requestId": .string(slow), "context": "vessels.self", "put": ["path": "electrical.switches.deck.state", "value": 1]])
        let pendingFrame = await reply(ws, slow)
        let pending = try XCTUnwrap(pendingFrame)
        XCTAssertEqual(pending["state"], "PENDING")
        XCTAssertEqual(pending["statusCode"], 202)
        let (_, polled2, _) = try await http(.GET, r.base, "/signalk/v1/requests/\(slow)")
        XCTAssertEqual(polled2?["state"], "PENDING")
        ws.send(["requestId": .string(slow), "query": true])
        let queried = await reply(ws, slow)
        XCTAssertEqual(queried?["state"], "PENDING")
        let completed = await r.sim.completeRequest(slow, statusCode: 200)
        XCTAssertTrue(completed)
        let finishedFrame = await reply(ws, slow)
        let finished = try XCTUnwrap(finishedFrame)
        XCTAssertEqual(finished["state"], "COMPLETED")
        XCTAssertEqual(finished["statusCode"], 200)
        let (_, polled3, _) = try await http(.GET, r.base, "/signalk/v1/requests/\(slow)")
        XCTAssertEqual(polled3?["state"], "COMPLETED")
        ws.send(["requestId": "no-such-request", "query": true])
        let unknown = await reply(ws, "no-such-request")
        XCTAssertEqual(unknown, ["requestId": "no-such-request", "statusCode": 404])
        await ws.close()
    }

    /// Publishes `path` from `ws` (optionally as `$source`), then waits for its replay on a
    /// subscription from the same socket: the server has handled the delta then.
    func publish(_ ws: SKTestSocket, _ path: String, source: String? = nil) async {
        var update: [String: JSONValue] = ["values": [["path": .string(path), "value": 0]]]
        if let source { update["$source"] = .string(source) }
        ws.send(["context": "vessels.self", "updates": [.object(update)]])
        ws.send(["context": "vessels.self", "subscribe": [["path": .string(path), "policy": "instant"]]])
        _ = await framesBefore(ws, valueOf: path)
    }

    func testPutToAPathASocketPublishesIsForwardedToIt() async throws {
        let r = try await SKPutSim.shared.get()
        let path = "electrical.switches.bow\(UInt32.random(in: 0...UInt32.max)).state"
        let device = try await socket(r.base, "subscribe=none")
        await publish(device, path)
        let app = try await socket(r.base, "subscribe=none")
        let id = UUID().uuidString.lowercased()
        app.send(["requestId": .string(id), "context": "vessels.self", "put": ["path": .string(path), "value": 1]])
        let pendingFrame = await reply(app, id)
        XCTAssertEqual(pendingFrame?["state"], "PENDING")
        let forwardedFrame = await reply(device, id)
        let forwarded = try XCTUnwrap(forwardedFrame)
        XCTAssertEqual(forwarded, ["requestId": .string(id), "context": "vessels.self", "put": [["path": .string(path), "value": 1]]])
        XCTAssertNil(forwarded["state"], "a forwarded PUT has no state")
        device.send(["requestId": .string(id), "state": "COMPLETED", "statusCode": 200])
        let doneFrame = await reply(app, id)
        XCTAssertEqual(doneFrame?["state"], "COMPLETED")
        XCTAssertEqual(doneFrame?["statusCode"], 200)
        let (_, polled, _) = try await http(.GET, r.base, "/signalk/v1/requests/\(id)")
        XCTAssertEqual(polled?["statusCode"], 200)

        // Two sources publish a path: a PUT must name one.
        let other = try await socket(r.base, "subscribe=none")
        let shared = "electrical.switches.mast\(UInt32.random(in: 0...UInt32.max)).state"
        await publish(device, shared, source: "relay.1")
        await publish(other, shared, source: "relay.2")
        let (status, body, _) = try await http(
            .PUT, r.base, "/signalk/v1/api/vessels/self/" + shared.replacingOccurrences(of: ".", with: "/"), body: #"{"value":1}"#)
        XCTAssertEqual(status, 400)
        XCTAssertEqual(body?["message"], "there are multiple sources for the given path, but no source was specified in the request")
        await device.close()
        await other.close()
        await app.close()
    }

    // MARK: meta

    func testMetaOverREST() async throws {
        let r = try await SKSharedSims.shared.boat()
        let api = "/signalk/v1/api/vessels/"
        let (s1, meta, _) = try await http(.GET, r.base, api + "self/navigation/speedOverGround/meta")
        XCTAssertEqual(s1, 200)
        XCTAssertEqual(meta?["units"], "m/s")
        XCTAssertNotNil(meta?["description"]?.stringValue)
        let (s2, units, _) = try await http(.GET, r.base, api + "self/navigation/speedOverGround/meta/units")
        XCTAssertEqual(s2, 200)
        XCTAssertEqual(units, "m/s")
        // Any vessel id, as signalk-server's schema lookup.
        let (s3, rad, _) = try await http(.GET, r.base, api + "foo/navigation/headingTrue/meta/units")
        XCTAssertEqual(s3, 200)
        XCTAssertEqual(rad, "rad")
        let (s4, volts, _) = try await http(.GET, r.base, api + "self/electrical/batteries/house/voltage/meta/units")
        XCTAssertEqual(s4, 200)
        XCTAssertEqual(volts, "V")
        for missing in ["self/navigation/headingTrueTRUE/meta", "self/navigation/headingTrueTRUE/meta/units",
                        "self/navigation/position/meta/units"] {
            let (status, _, _) = try await http(.GET, r.base, api + missing)
            XCTAssertEqual(status, 404, missing)
        }
    }

    /// signalk-server's built-in meta PUT (`put.ts` `putMetaHandler`): `…/meta/<key>` and the
    /// whole `…/meta` update the path's metadata, answer 202 PENDING and complete with 200, and
    /// send the `meta` delta to `sendMeta=all` sockets at once; GET reads the new metadata.
    func testMetaPutUpdatesMetadataCompletesAndTellsSendMetaSockets() async throws {
        let r = try await SKSharedSims.shared.boat()
        let api = "/signalk/v1/api/vessels/self/environment/water/temperature/meta"
        let watcher = try await socket(r.base, "subscribe=self&sendMeta=all&sendCachedValues=false")
        let (status, reply, text) = try await http(.PUT, r.base, api + "/displayName", body: #"{"value":"Sea"}"#)
        XCTAssertEqual(status, 202, text)
        XCTAssertEqual(reply?["state"], "PENDING")
        let href = try XCTUnwrap(reply?["href"]?.stringValue)
        var done: JSONValue?
        for _ in 0..<200 {
            let (_, polled, _) = try await http(.GET, r.base, href)
            if polled?["state"] == "COMPLETED" { done = polled; break }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(done?["statusCode"], 200)
        var announced: JSONValue?
        while let frame = await watcher.nextJSON() {
            if let m = frame["updates"]?[0]?["meta"]?[0], m["path"] == "environment.water.temperature" { announced = m; break }
        }
        XCTAssertEqual(announced?["value"]?["displayName"], "Sea")
        XCTAssertEqual(announced?["value"]?["units"], "K", "the schema's fields stay")
        let (s1, name, _) = try await http(.GET, r.base, api + "/displayName")
        XCTAssertEqual(s1, 200)
        XCTAssertEqual(name, "Sea")
        // The whole meta: replaces what was PUT before (displayName goes), keeps the schema's units.
        let (s2, whole, _) = try await http(.PUT, r.base, api, body: #"{"value":{"zones":[{"lower":270,"state":"alarm"}]}}"#)
        XCTAssertEqual(s2, 202)
        XCTAssertEqual(whole?["state"], "PENDING")
        let (_, meta, _) = try await http(.GET, r.base, api)
        XCTAssertEqual(meta?["units"], "K")
        XCTAssertEqual(meta?["zones"]?[0]?["state"], "alarm")
        XCTAssertNil(meta?["displayName"])
        await watcher.close()
    }

    /// Frames up to the first value delta of `path` (exclusive).
    func framesBefore(_ ws: SKTestSocket, valueOf path: String) async -> [JSONValue] {
        var seen: [JSONValue] = []
        while let v = await ws.nextJSON() {
            if v["updates"]?[0]?["values"]?[0]?["path"]?.stringValue == path { return seen }
            seen.append(v)
        }
        XCTFail("socket ended before a value of \(path)")
        return seen
    }

    func testSendMetaAllSendsMetaDeltasBeforeTheFirstValueOfEachPath() async throws {
        let r = try await SKSharedSims.shared.boat()
        let path = "environment.wind.speedApparent"
        let ws = try await socket(r.base, "subscribe=none&sendMeta=all")
        ws.send(["context": "vessels.self", "subscribe": [["path": .string(path), "policy": "instant"]]])
        let before = await framesBefore(ws, valueOf: path)
        let metas = before.compactMap { $0["updates"]?[0]?["meta"]?[0] }
        XCTAssertEqual(metas.map { $0["path"]?.stringValue }, [path, "environment.wind"], "\(before)")
        XCTAssertEqual(metas.first?["value"]?["units"], "m/s")
        XCTAssertEqual(before.first?["context"]?.stringValue, r.sim.selfContext)
        XCTAssertNil(before.first?["updates"]?[0]?["values"], "a meta-only update has no values")
        // Once per path: a second subscription replays only the value.
        ws.send(["context": "vessels.self", "subscribe": [["path": .string(path), "policy": "instant"]]])
        let again = await framesBefore(ws, valueOf: path)
        XCTAssertEqual(again, [])
        await ws.close()

        let plain = try await socket(r.base, "subscribe=none")
        plain.send(["context": "vessels.self", "subscribe": [["path": .string(path), "policy": "instant"]]])
        let none = await framesBefore(plain, valueOf: path)
        XCTAssertEqual(none, [])
        await plain.close()
    }
}
