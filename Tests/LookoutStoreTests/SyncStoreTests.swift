import Foundation
import LookoutTestSupport
import GRDB
import LookoutSim
import NightscoutKit
import XCTest

@testable import LookoutStore

/// `StateStore` as NightscoutKit's `SyncStore`: the `v3-sync` tables, atomic pages, range reads,
/// tombstones, and a real `SyncManager` against the simulator.
final class SyncStoreTests: XCTestCase {
    private let site = "https://ns.example"

    private func doc(_ id: String, date: Int64?, srv: Int64? = nil, valid: Bool = true, extra: String = "") -> MirrorDocument {
        var fields = ["\"identifier\":\"\(id)\""]
        if let date { fields.append("\"date\":\(date)") }
        if let srv { fields.append("\"srvModified\":\(srv)") }
        if !valid { fields.append("\"isValid\":false") }
        if !extra.isEmpty { fields.append(extra) }
        let raw = Data(("{" + fields.joined(separator: ",") + "}").utf8)
        return MirrorDocument(identifier: id, date: date, srvModified: srv, isValid: valid, raw: raw)
    }

    func testMigrationCreatesTablesAndIndex() async throws {
        let store = try StateStore()
        let names = try await store.database.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'sync_%' ORDER BY name")
        }
        XCTAssertEqual(names, ["sync_cursor", "sync_mirror", "sync_mirror_date"])
        XCTAssertTrue(StateStore.migrations.map(\.name).contains("v3-sync"))
    }

    func testRoundTripOfDocumentsAndCursor() async throws {
        let store = try StateStore()
        let none = try await store.cursor(site: site, collection: .entries)
        XCTAssertNil(none)
        var cursor = HistoryCursor()
        XCTAssertTrue(cursor.accept(srvModified: 1_700_000_000_500, identifier: "a"))
        XCTAssertTrue(cursor.accept(srvModified: 1_700_000_000_500, identifier: "b"))
        let a = doc("a", date: 1_700_000_000_000, srv: 1_700_000_000_500, extra: "\"sgv\":120,\"note\":\"é\\u00e9\"")
        let b = doc("b", date: 1_700_000_300_000, srv: 1_700_000_000_500)
        try await store.apply(site: site, collection: .entries, documents: [a, b], cursor: cursor)

        let storedCursor = try await store.cursor(site: site, collection: .entries)
        XCTAssertEqual(storedCursor, cursor)
        let raw = try await store.documents(site: site, collection: .entries)
        XCTAssertEqual(raw, [b.raw, a.raw], "newest first, bytes unchanged")
        let states = try await store.states(site: site, collection: .entries, identifiers: ["a", "b", "zz"])
        XCTAssertEqual(states, ["a": MirrorState(srvModified: 1_700_000_000_500, isValid: true),
                                "b": MirrorState(srvModified: 1_700_000_000_500, isValid: true)])

        // Upsert: a newer copy replaces; a nil cursor keeps the stored one; other sites and
        // collections are separate.
        let a2 = doc("a", date: 1_700_000_000_000, srv: 1_700_000_009_000, extra: "\"sgv\":121")
        try await store.apply(site: site, collection: .entries, documents: [a2], cursor: nil)
        let after = try await store.cursor(site: site, collection: .entries)
        XCTAssertEqual(after, cursor)
        let rawAfter = try await store.documents(site: site, collection: .entries)
        XCTAssertEqual(rawAfter, [b.raw, a2.raw])
        let other = try await store.documents(site: "https://other.example", collection: .entries)
        XCTAssertEqual(other, [])
        let treatments = try await store.documents(site: site, collection: .treatments)
        XCTAssertEqual(treatments, [])
        let count = try await store.mirrorCount(site: site, collection: .entries)
        XCTAssertEqual(count, 2)
    }

    func testFailingApplyLeavesNothing() async throws {
        let store = try StateStore()
        var cursor = HistoryCursor()
        _ = cursor.accept(srvModified: 1_700_000_000_000, identifier: "x")
        let good = doc("x", date: 1_700_000_000_000, srv: 1_700_000_000_000)
        // A raw BLOB cannot be NULL: make the second row violate the schema by giving it an
        // identifier SQLite refuses through a trigger that fails the insert.
        try await store.database.write { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER fail_poison BEFORE INSERT ON sync_mirror WHEN NEW.identifier = 'poison'
                BEGIN SELECT RAISE(ABORT, 'poisoned'); END
                """)
        }
        let poison = doc("poison", date: 1_700_000_000_001, srv: 1_700_000_000_001)
        do {
            try await store.apply(site: site, collection: .entries, documents: [good, poison], cursor: cursor)
            XCTFail("apply should fail")
        } catch {
            XCTAssertTrue("\(error)".contains("poisoned"), "\(error)")
        }
        let stored = try await store.documents(site: site, collection: .entries, from: nil, through: nil, limit: nil, includeDeleted: true)
        XCTAssertEqual(stored, [], "no document of the failed page")
        let storedCursor = try await store.cursor(site: site, collection: .entries)
        XCTAssertNil(storedCursor, "no cursor of the failed page")
        // The same page without the poison is stored whole.
        try await store.apply(site: site, collection: .entries, documents: [good], cursor: cursor)
        let later = try await store.cursor(site: site, collection: .entries)
        XCTAssertEqual(later, cursor)
    }

    func testRangeQueriesLimitsAndTombstones() async throws {
        let store = try StateStore()
        let t0: Int64 = 1_714_557_600_000
        let docs = [
            doc("e1", date: t0),
            doc("e2", date: t0 + 300_000),
            doc("e3", date: t0 + 600_000, valid: false),
            doc("e4", date: t0 + 900_000),
            doc("e5", date: t0 + 900_000),  // a tie: ordered by identifier, descending
            doc("nodate", date: nil),
        ]
        try await store.apply(site: site, collection: .entries, documents: docs, cursor: nil)
        func ids(_ data: [Data]) -> [String] {
            data.compactMap { (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any] }.compactMap { $0["identifier"] as? String }
        }
        let all = try await store.documents(site: site, collection: .entries)
        XCTAssertEqual(ids(all), ["e5", "e4", "e2", "e1"], "live only, newest first, undated never in a range")
        let withDeleted = try await store.documents(site: site, collection: .entries, from: nil, through: nil, limit: nil,
                                                    includeDeleted: true)
        XCTAssertEqual(ids(withDeleted), ["e5", "e4", "e3", "e2", "e1"])
        let range = try await store.documents(site: site, collection: .entries, from: t0 + 300_000, through: t0 + 900_000)
        XCTAssertEqual(ids(range), ["e5", "e4", "e2"], "bounds inclusive")
        let limited = try await store.documents(site: site, collection: .entries, from: t0, through: nil, limit: 2)
        XCTAssertEqual(ids(limited), ["e5", "e4"])
        let identifiers = try await store.identifiers(site: site, collection: .entries, from: t0, through: t0 + 600_000)
        XCTAssertEqual(identifiers, ["e1", "e2"], "tombstones excluded")
        let states = try await store.states(site: site, collection: .entries, identifiers: ["e3"])
        XCTAssertEqual(states["e3"], MirrorState(srvModified: nil, isValid: false), "tombstones still answer states")

        // Many identifiers at once (beyond one chunk of bound parameters).
        let many = (0..<1200).map { doc("m\($0)", date: t0 + Int64($0)) }
        try await store.apply(site: site, collection: .treatments, documents: many, cursor: nil)
        let manyStates = try await store.states(site: site, collection: .treatments, identifiers: many.map(\.identifier))
        XCTAssertEqual(manyStates.count, 1200)
    }

    func testCursorSurvivesReopeningTheFile() async throws {
        let folder = NSTemporaryDirectory() + "/lookout-sync-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var cursor = HistoryCursor()
        _ = cursor.accept(srvModified: 1_700_000_000_000, identifier: "k")
        do {
            let store = try StateStore(path: folder + "/lookout.sqlite3")
            try await store.apply(site: site, collection: .profile, documents: [doc("k", date: 1_700_000_000_000)], cursor: cursor)
        }
        let reopened = try StateStore(path: folder + "/lookout.sqlite3")
        let stored = try await reopened.cursor(site: site, collection: .profile)
        XCTAssertEqual(stored, cursor)
        let docs = try await reopened.documents(site: site, collection: .profile)
        XCTAssertEqual(docs.count, 1)
    }

    /// NightscoutKit's `SyncManager` over the SQL store, against the simulator: sync, a second
    /// sync with nothing new, an update and a soft deletion, and the mirror read back.
    func testSyncManagerAgainstTheSimulator() async throws {
        let running = try await NightscoutModuleSim.shared.start()
        let client = NightscoutClient(configuration: try NightscoutConfiguration(
            site: running.url.absoluteString, credentials: .accessToken(running.adminToken)))
        let store = try StateStore()
        let manager = try SyncManager(client: client, store: store, pageLimit: 50)
        let device = "sql-sync-\(UUID().uuidString.prefix(8))"
        let t0: Int64 = 1_715_000_000_000
        var ids: [String] = []
        for i in 0..<5 {
            let note = Treatment(common: CommonFields(date: NightscoutDate(epochMilliseconds: t0 + Int64(i) * 60_000),
                                                      app: "sync-store-tests", device: device),
                                 eventType: EventType(rawValue: "Note"), notes: "note \(i)")
            ids.append(try await client.create(.treatments, note).identifier)
        }
        let first = try await manager.sync(.treatments)
        XCTAssertEqual(first.added.filter(Set(ids).contains), ids)
        XCTAssertNotNil(first.cursor)
        let second = try await manager.sync(.treatments)
        XCTAssertTrue(second.isEmpty, "\(second)")

        _ = try await client.v3JSON("PATCH", "/api/v3/treatments/" + ids[0], body: Data(#"{"notes":"changed"}"#.utf8))
        _ = try await client.v3JSON("DELETE", "/api/v3/treatments/" + ids[1])
        let third = try await manager.sync(.treatments)
        XCTAssertEqual(third.updated, [ids[0]])
        XCTAssertEqual(third.deleted, [ids[1]])

        let mirrored = try await manager.mirror(.treatments, from: Date(timeIntervalSince1970: Double(t0) / 1000),
                                                through: Date(timeIntervalSince1970: Double(t0 + 300_000) / 1000))
        let docs = mirrored.compactMap { (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any] }
            .filter { $0["device"] as? String == device }
        XCTAssertEqual(docs.compactMap { $0["identifier"] as? String }, [ids[4], ids[3], ids[2], ids[0]])
        XCTAssertEqual(docs.last?["notes"] as? String, "changed")
        let cursor = try await store.cursor(site: manager.site, collection: .treatments)
        XCTAssertEqual(cursor, third.cursor)
    }
}
