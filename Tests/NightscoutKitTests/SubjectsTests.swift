import Foundation
import LookoutSim
import LookoutWire
@testable import NightscoutKit
import XCTest

/// `createSubject` / `subjects` / `deleteSubject` against the simulator's Admin Tools API.
final class SubjectsTests: XCTestCase {
    func testCreateListUseAndDeleteAReadToken() async throws {
        let admin = try await ClientSimHarness.shared.secretClient()
        let name = "kit-reader-\(UInt32.random(in: 0...UInt32.max))"
        let made = try await admin.createSubject(name: name, roles: ["readable"], notes: "test")
        XCTAssertEqual(made.name, name)
        XCTAssertEqual(made.roles, ["readable"])
        let token = try XCTUnwrap(made.accessToken)
        XCTAssertTrue(token.hasPrefix("kitreader"), token)
        XCTAssertFalse(made.description.contains(String(token.split(separator: "-").last!)), "description hides the secret part")
        let listed = try await admin.subjects()
        XCTAssertTrue(listed.contains(made))

        let reader = try await ClientSimHarness.shared.client(.accessToken(token))
        let status = try await reader.verifyAuth()
        XCTAssertTrue(status.canRead)
        do {
            _ = try await reader.createSubject(name: "escalate", roles: ["admin"])
            XCTFail("a read token may not create subjects")
        } catch NightscoutError.unauthorized {}

        try await admin.deleteSubject(id: made.id)
        let after = try await admin.subjects()
        XCTAssertFalse(after.contains { $0.id == made.id })
    }

    func testMaskedHidesTheSecretPart() {
        XCTAssertEqual(AuthorizationSubject.masked("reader-0123456789abcdef"), "reader-…")
        XCTAssertEqual(AuthorizationSubject.masked("a-b-0123456789abcdef"), "a-b-…")
        XCTAssertEqual(AuthorizationSubject.masked("nodash"), "…")
    }
}
