import AsyncHTTPClient
import Foundation
import LookoutSim
import LookoutWire
import XCTest

/// `/api/v2/authorization/subjects` and `/roles` as Admin Tools uses them (issue 17).
final class NightscoutSubjectsTests: XCTestCase {
    let subjects = "/api/v2/authorization/subjects"
    let roles = "/api/v2/authorization/roles"

    func testSubjectsCRUDAndDerivedTokens() async throws {
        let h = SimHarness { $0.defaultRoles = ["denied"] }
        try await h.start()
        let anonymous = try await h.request(.GET, subjects)
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.json, ["status": 401, "message": "Unauthorized", "description": "Invalid/Missing"])

        let created = try await h.request(
            .POST, subjects, headers: h.secretHeader, body: ["name": "Lookout Reader!", "roles": ["readable"], "notes": "for scripts"])
        XCTAssertEqual(created.status, 200, created.text)
        let id = try XCTUnwrap(created.json?["_id"]?.stringValue)
        XCTAssertEqual(id.count, 24)
        XCTAssertEqual(created.json?["name"], "Lookout Reader!")
        XCTAssertEqual(created.json?["roles"], ["readable"])
        XCTAssertEqual(created.json?["notes"], "for scripts")
        XCTAssertNotNil(created.json?["created_at"]?.stringValue)
        XCTAssertNil(created.json?["accessToken"], "the POST answer has no token; GET lists it")

        let listed = try await h.request(.GET, subjects, headers: h.secretHeader)
        let mine = try XCTUnwrap(listed.json?.arrayValue?.first { $0["_id"]?.stringValue == id })
        let expected = "lookoutrea-" + NightscoutSimulator.sha1Hex(SimHarness.secretHash + id).prefix(16)
        XCTAssertEqual(mine, ["_id": .string(id), "name": "Lookout Reader!", "accessToken": .string(expected), "roles": ["readable"]])

        let read = try await h.request(.GET, "/api/v1/entries.json?token=\(expected)")
        XCTAssertEqual(read.status, 200, "the derived token reads")

        let noID = try await h.request(.PUT, subjects, headers: h.secretHeader, body: ["name": "x", "roles": ["readable"]])
        XCTAssertEqual(noID.status, 500)
        XCTAssertEqual(noID.json, ["status": 500, "message": "Mongo Error", "description": "Missing _id for update"])
        let demoted = try await h.request(
            .PUT, subjects, headers: h.secretHeader, body: ["_id": .string(id), "name": "Lookout Reader!", "roles": ["denied"]])
        XCTAssertEqual(demoted.status, 200)
        let refused = try await h.request(.GET, "/api/v1/entries.json?token=\(expected)")
        XCTAssertEqual(refused.status, 401, "roles changed by PUT apply at once")

        let deleted = try await h.request(.DELETE, subjects + "/" + id, headers: h.secretHeader)
        XCTAssertEqual(deleted.status, 200)
        XCTAssertEqual(deleted.json, [:])
        let after = try await h.request(.GET, subjects, headers: h.secretHeader)
        XCTAssertFalse(after.json?.arrayValue?.contains { $0["_id"]?.stringValue == id } ?? true)
        await h.stop()
    }

    func testAnAdminTokenManagesSubjectsAndAReadTokenDoesNot() async throws {
        let h = SimHarness { $0.defaultRoles = ["denied"] }
        try await h.start()
        let admin = await h.sim.addSubject(name: "boss", roles: ["admin"])
        let reader = await h.sim.addSubject(name: "reader", roles: ["readable"])
        let byReader = try await h.request(.POST, subjects + "?token=\(reader)", body: ["name": "x", "roles": ["admin"]])
        XCTAssertEqual(byReader.status, 401)
        let byAdmin = try await h.request(.POST, subjects + "?token=\(admin)", body: ["name": "uploader", "roles": ["careportal"]])
        XCTAssertEqual(byAdmin.status, 200)
        let list = try await h.request(.GET, subjects, headers: [("api-secret", NightscoutSimulator.sha1Hex(admin))])
        XCTAssertEqual(list.json?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["boss", "reader", "uploader"], "by name")
        // The token's name part is `name.toLowerCase().replace(/[\W]/g, '').substring(0, 10)`: \W is ASCII.
        let made = try await h.request(.POST, subjects, headers: h.secretHeader, body: ["name": "Ärzte-Team 1", "roles": ["readable"]])
        let id = try XCTUnwrap(made.json?["_id"]?.stringValue)
        let all = try await h.request(.GET, subjects, headers: h.secretHeader)
        let token = all.json?.arrayValue?.first { $0["_id"]?.stringValue == id }?["accessToken"]?.stringValue
        XCTAssertEqual(token?.split(separator: "-").first, "rzteteam1")
        await h.stop()
    }

    func testRolesCRUD() async throws {
        let h = SimHarness { $0.defaultRoles = ["denied"] }
        try await h.start()
        let before = try await h.request(.GET, roles, headers: h.secretHeader)
        let names = before.json?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        XCTAssertEqual(names, ["activity", "admin", "careportal", "denied", "devicestatus-upload", "readable", "status-only"])
        XCTAssertEqual(before.json?[5], ["name": "readable", "permissions": ["*:*:read"]])
        let anon = try await h.request(.GET, roles)
        XCTAssertEqual(anon.status, 401)

        let made = try await h.request(
            .POST, roles, headers: h.secretHeader, body: ["name": "cgm-only", "permissions": ["api:entries:read"]])
        XCTAssertEqual(made.status, 200)
        let roleID = try XCTUnwrap(made.json?["_id"]?.stringValue)
        let token = await h.sim.addSubject(name: "watch", roles: ["cgm-only"])
        let entries = try await h.request(.GET, "/api/v1/entries.json?token=\(token)")
        XCTAssertEqual(entries.status, 200)
        let treatments = try await h.request(.GET, "/api/v1/treatments.json?token=\(token)")
        XCTAssertEqual(treatments.status, 401)
        let listed = try await h.request(.GET, roles, headers: h.secretHeader)
        XCTAssertEqual(listed.json?.arrayValue?.first { $0["name"] == "cgm-only" }?["_id"]?.stringValue, roleID)

        let gone = try await h.request(.DELETE, roles + "/" + roleID, headers: h.secretHeader)
        XCTAssertEqual(gone.json, [:])
        let now = try await h.request(.GET, "/api/v1/entries.json?token=\(token)")
        XCTAssertEqual(now.status, 401, "a deleted role grants nothing")
        await h.stop()
    }
}
