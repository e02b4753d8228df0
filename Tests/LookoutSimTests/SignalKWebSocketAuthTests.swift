import Foundation
import LookoutSim
import LookoutWire
import XCTest

/// Login and access requests over the stream, as signalk-server's `ws.ts` answers them
/// (issue 27): the replies arrive on the socket with the client's `requestId`, and a token they
/// give authenticates the socket in place.
extension SignalKAdminTests {
    /// An anonymous socket on the strict secured simulator (hello, then nothing).
    func anonymousSocket(_ base: URL) async throws -> SKTestSocket {
        let ws = SKTestSocket("ws://127.0.0.1:\(base.port!)/signalk/v1/stream?subscribe=self")
        let hello = await ws.nextJSON()
        XCTAssertEqual(hello?["name"], "signalk-server")
        return ws
    }

    /// The next frame with `requestId` (deltas are skipped).
    func reply(_ ws: SKTestSocket, _ requestId: String) async -> JSONValue? {
        while let v = await ws.nextJSON() {
            if v["requestId"]?.stringValue == requestId { return v }
        }
        return nil
    }

    /// The next delta frame (with `updates`).
    func delta(_ ws: SKTestSocket) async -> JSONValue? {
        while let v = await ws.nextJSON() {
            if v["updates"] != nil { return v }
        }
        return nil
    }

    func testLoginOverTheStreamAnswersAndAuthenticatesTheSocket() async throws {
        let r = try await SKSecuredSims.shared.get(allowReadOnly: false)
        let ws = try await anonymousSocket(r.base)
        ws.send(["requestId": "login-1", "login": ["username": "admin", "password": "wrong"]])
        let refused = await reply(ws, "login-1")
        XCTAssertEqual(refused?["state"], "COMPLETED")
        XCTAssertEqual(refused?["statusCode"], 401)
        XCTAssertEqual(refused?["login"], [:])

        ws.send(["requestId": "login-2", "login": ["username": "admin", "password": "admin-pw"]])
        let ok = await reply(ws, "login-2")
        XCTAssertEqual(ok?["statusCode"], 200)
        XCTAssertEqual(ok?["login"]?["timeToLive"], .null)
        let token = try XCTUnwrap(ok?["login"]?["token"]?.stringValue)
        let (status, _, _) = try await http(.GET, r.base, "/signalk/v1/api/self", headers: [("Authorization", "Bearer " + token)])
        XCTAssertEqual(status, 200)
        // The socket is authenticated in place: its subscribe=self stream flows now.
        await r.sim.tick()
        let d = await delta(ws)
        XCTAssertEqual(d?["context"]?.stringValue, r.sim.selfContext)
        await ws.close()
    }

    func testAnAccessRequestOverTheStreamGetsBothRepliesOnTheSocket() async throws {
        let r = try await SKSecuredSims.shared.get(allowReadOnly: false)
        let clientId = UUID().uuidString.lowercased()
        let ws = try await anonymousSocket(r.base)
        let request: JSONValue = ["clientId": .string(clientId), "description": "Helm iPad", "permissions": "readwrite"]
        ws.send(["requestId": "access-1", "accessRequest": request])
        let pending = await reply(ws, "access-1")
        XCTAssertEqual(pending?["state"], "PENDING")
        XCTAssertEqual(pending?["statusCode"], 202)
        XCTAssertEqual(pending?["href"], "/signalk/v1/requests/access-1")
        XCTAssertTrue(r.notices.withLock { $0.contains { $0.clientId == clientId } }, "the admin hears of it")
        ws.send(["requestId": "access-2", "accessRequest": request])
        let second = await reply(ws, "access-2")
        XCTAssertEqual(second?["statusCode"], 400)
        XCTAssertEqual(second?["message"], "A request has already been submitted")

        let approved = await r.sim.approveAccessRequest(clientId: clientId)
        XCTAssertTrue(approved)
        let done = await reply(ws, "access-1")
        XCTAssertEqual(done?["state"], "COMPLETED")
        XCTAssertEqual(done?["statusCode"], 200)
        XCTAssertEqual(done?["accessRequest"]?["permission"], "APPROVED")
        XCTAssertNotNil(done?["accessRequest"]?["token"]?.stringValue)
        let (_, polled, _) = try await http(.GET, r.base, "/signalk/v1/requests/access-1")
        XCTAssertEqual(polled?["accessRequest"]?["permission"], "APPROVED")
        // Authenticated in place with what it asked for: the stream flows, and its deltas are taken.
        await r.sim.tick()
        let d = await delta(ws)
        XCTAssertEqual(d?["context"]?.stringValue, r.sim.selfContext)
        ws.send(["context": "vessels.self", "updates": [["values": [["path": "steering.rudderAngle", "value": 0.1]]]]])
        let admin = try await login(r.base, "admin", "admin-pw")
        var published: JSONValue?
        for _ in 0..<500 {
            let (_, v, _) = try await http(.GET, r.base, "/signalk/v1/api/vessels/self/steering/rudderAngle/value",
                                           headers: [("Authorization", "Bearer " + admin)])
            if let v { published = v; break }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(published?.doubleValue, 0.1)
        await ws.close()
    }

    /// Security off: an access request gets the dummy strategy's 404 (without requestId), a login
    /// no reply at all (the query after it is the next answer).
    func testStreamLoginAndAccessRequestWithSecurityOff() async throws {
        let r = try await SKSharedSims.shared.boat()
        let ws = SKTestSocket("ws://127.0.0.1:\(r.base.port!)/signalk/v1/stream?subscribe=none")
        _ = await ws.nextJSON()
        ws.send(["requestId": "a", "accessRequest": ["clientId": "c", "description": "d"]])
        let refused = await ws.nextJSON()
        XCTAssertEqual(refused, [
            "state": "COMPLETED", "statusCode": 404,
            "message": "Access requests not available. Server security may not be enabled.",
        ])
        ws.send(["requestId": "l", "login": ["username": "admin", "password": "x"]])
        ws.send(["requestId": "q", "query": true])
        let answer = await ws.nextJSON()
        XCTAssertEqual(answer, ["requestId": "q", "statusCode": 404])
        await ws.close()
    }
}
