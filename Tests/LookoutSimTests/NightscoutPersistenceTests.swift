import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest

final class NightscoutPersistenceTests: XCTestCase {
    func testSQLiteSurvivesRestart() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("lookoutsim-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let subject = NightscoutSubject(name: "uploader", roles: ["admin"], id: "0123456789abcdef01234567")
        func make() -> SimHarness {
            SimHarness {
                $0.persistence = .sqlite(path: path)
                $0.subjects = [subject]
            }
        }
        let a = make()
        try await a.start()
        let maybeToken = await a.sim.accessToken(forSubject: "uploader")
        let token = try XCTUnwrap(maybeToken)
        let auth = [("Authorization", "Bearer " + (try await a.jwt(for: token)))]
        let c = try await a.request(
            .POST, "/api/v3/treatments", headers: auth, body: ["date": 1_714_557_000_000, "app": "t", "eventType": "Note"])
        let id = try XCTUnwrap(c.json?["identifier"]?.stringValue)
        let gone = try await a.request(
            .POST, "/api/v3/treatments", headers: auth, body: ["date": 1_714_557_000_001, "app": "t", "eventType": "Note"])
        let goneID = try XCTUnwrap(gone.json?["identifier"]?.stringValue)
        _ = try await a.request(.DELETE, "/api/v3/treatments/\(goneID)?permanent=true", headers: auth)
        _ = try await a.request(.POST, "/api/v1/entries", headers: a.secretHeader,
                                body: ["type": "sgv", "sgv": 101, "date": 1_714_557_600_000])
        await a.stop()

        let b = make()
        try await b.start()
        let sameToken = await b.sim.accessToken(forSubject: "uploader")
        XCTAssertEqual(sameToken, token)
        let auth2 = [("Authorization", "Bearer " + (try await b.jwt(for: token)))]
        let r = try await b.request(.GET, "/api/v3/treatments/\(id)", headers: auth2)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.json?["result"]?["srvModified"], .int(1_714_557_600_000))
        let r2 = try await b.request(.GET, "/api/v3/treatments/\(goneID)", headers: auth2)
        XCTAssertEqual(r2.status, 404)
        let e = try await b.request(.GET, "/api/v1/entries.json", headers: b.secretHeader)
        XCTAssertEqual(e.json?.arrayValue?.first?["sgv"], 101)
        await b.stop()
    }
}
