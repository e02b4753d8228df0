import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest
import LookoutWire

/// `/api/v2/remotecommands` (spec §5.3) on the wire: auth, validation, filters, the switch that
/// turns the endpoint off, and the automatic receiving app.
final class RemoteCommandsRouteTests: XCTestCase {
    func testRoutesAuthValidationFiltersAndTheOffSwitch() async throws {
        let h = SimHarness()
        try await h.start()
        let created = "2024-05-01T10:00:01.000+0000"
        let command: JSONValue = [
            "version": "2.0", "createdDate": .string(created), "sendNotification": false, "otp": "",
            "status": ["state": "Pending", "message": ""], "action": ["closedLoop": ["active": false]],
        ]
        let anonymous = try await h.request(.POST, "/api/v2/remotecommands", body: command)
        XCTAssertEqual(anonymous.status, 401)
        let bad = try await h.request(.POST, "/api/v2/remotecommands", headers: h.secretHeader,
                                      body: ["version": "2.0", "createdDate": .string(created), "status": ["state": "Pending"],
                                             "action": ["tempBasal": [:]]])
        XCTAssertEqual(bad.status, 400)
        XCTAssertTrue(bad.text.contains("action must be an object with one of"), bad.text)

        let stored = try await h.request(.POST, "/api/v2/remotecommands", headers: h.secretHeader, body: command)
        XCTAssertEqual(stored.status, 200)
        let id = try XCTUnwrap(stored.json?["_id"]?.stringValue)
        XCTAssertEqual(id.count, 24)
        XCTAssertEqual(stored.json?["created_at"]?.stringValue, "2024-05-01T10:00:01.000Z")

        let query = "find%5Bcreated_at%5D%5B%24gte%5D=2024-05-01T10:00:00.000Z&find%5Bstatus.state%5D%5B%24eq%5D="
        let pending = try await h.request(.GET, "/api/v2/remotecommands?\(query)Pending&count=50", headers: h.secretHeader)
        XCTAssertEqual(pending.json?.arrayValue?.compactMap { $0["_id"]?.stringValue }, [id])
        let later = try await h.request(.GET, "/api/v2/remotecommands?find%5Bcreated_at%5D%5B%24gte%5D=2024-05-01T10:00:02Z",
                                        headers: h.secretHeader)
        XCTAssertEqual(later.json?.arrayValue?.count, 0)

        let badState = try await h.request(.PUT, "/api/v2/remotecommands/\(id)", headers: h.secretHeader,
                                           body: ["status": ["state": "Done"]])
        XCTAssertEqual(badState.status, 400)
        let update = try await h.request(.PUT, "/api/v2/remotecommands/\(id)", headers: h.secretHeader,
                                         body: ["status": ["state": "Error", "message": "Pump error"]])
        XCTAssertEqual(update.json?["status"]?["message"]?.stringValue, "Pump error")
        let unknown = try await h.request(.PUT, "/api/v2/remotecommands/ffffffffffffffffffffffff", headers: h.secretHeader,
                                          body: ["status": ["state": "Success"]])
        XCTAssertEqual(unknown.status, 404)

        await h.sim.setRemoteCommandsEnabled(false)
        let off = try await h.request(.GET, "/api/v2/remotecommands?\(query)Pending", headers: h.secretHeader)
        XCTAssertEqual(off.status, 404)
        await h.sim.setRemoteCommandsEnabled(true)
        let deleted = try await h.request(.DELETE, "/api/v2/remotecommands?find%5Bcreated_at%5D%5B%24gte%5D=2023-05-01T00:00:00Z",
                                          headers: h.secretHeader)
        XCTAssertEqual(deleted.json?["n"]?.int64Value, 1)
        let none = await h.sim.storedRemoteCommands()
        XCTAssertEqual(none.count, 0)
    }

    func testTheAutomaticAppTakesANotifiedCommandToSuccess() async throws {
        let h = SimHarness()
        try await h.start()
        let created = Date(timeIntervalSince1970: 1_714_557_600)  // the harness clock
        let otp = try XCTUnwrap(h.sim.loopOTPCode(at: created))
        let command: JSONValue = [
            "version": "2.0", "createdDate": "2024-05-01T10:00:00.000+0000", "sendNotification": true, "otp": .string(otp),
            "status": ["state": "Pending", "message": ""], "action": ["bolus": ["amountInUnits": 0.5]],
        ]
        let stored = try await h.request(.POST, "/api/v2/remotecommands", headers: h.secretHeader, body: command)
        let id = try XCTUnwrap(stored.json?["_id"]?.stringValue)
        let deadline = Date().addingTimeInterval(20)
        var steps: [String] = []
        while Date() < deadline {
            steps = await h.sim.remoteAppSteps().filter { $0.id == id }.map(\.state)
            if steps.count == 2 { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTAssertEqual(steps, ["InProgress", "Success"])
        let dose = await h.sim.documents("treatments").filter { $0["insulin"]?.doubleValue == 0.5 }
        XCTAssertEqual(dose.count, 1)
    }
}
