import Foundation
import XCTest

@testable import LookoutStore

extension StateBackendBehaviour {
    /// The profile catalogue: an import replaces a profile of the same service and name, the
    /// list comes back by service then name, and a removal says whether there was one.
    static func profileCatalogue(_ b: BackendUnderTest) async throws {
        let s = b.store
        let empty = try await s.catalogueProfiles()
        XCTAssertEqual(empty, [])
        let first = [
            CatalogueProfile(service: "nightscout", name: "child2", body: "url = \"https://two.example\"", updatedAt: now),
            CatalogueProfile(service: "nightscout", name: "child1", body: "url = \"https://one.example\"", updatedAt: now),
            CatalogueProfile(service: "signalk", name: "boat", body: "url = \"http://boat.local:3000\"", updatedAt: now),
        ]
        try await s.putCatalogueProfiles(first)
        let later = now.addingTimeInterval(60)
        try await s.putCatalogueProfiles([
            CatalogueProfile(service: "nightscout", name: "child2", body: "url = \"https://two.example\"\nunits = \"mmol\"", updatedAt: later),
        ])
        let listed = try await s.catalogueProfiles()
        XCTAssertEqual(listed.map { "\($0.service).\($0.name)" }, ["nightscout.child1", "nightscout.child2", "signalk.boat"])
        XCTAssertEqual(listed[1].body, "url = \"https://two.example\"\nunits = \"mmol\"", "an import replaces the profile")
        XCTAssertEqual(listed[1].updatedAt, later)
        let removed = try await s.removeCatalogueProfile(service: "nightscout", name: "child1")
        XCTAssertTrue(removed)
        let again = try await s.removeCatalogueProfile(service: "nightscout", name: "child1")
        XCTAssertFalse(again, "already gone")
        let left = try await s.catalogueProfiles()
        XCTAssertEqual(left.map(\.name), ["child2", "boat"])
    }
}
