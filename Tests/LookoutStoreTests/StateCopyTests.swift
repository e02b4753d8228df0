import Foundation
import LookoutConfig
import LookoutTestSupport
import NightscoutKit
import XCTest

@testable import LookoutStore

/// `lookout state migrate --to`: a SQLite state with something in every table, copied into
/// PostgreSQL, reads back the same through the PostgreSQL store; a second copy into the same
/// database is refused and changes nothing.
final class StateCopyTests: XCTestCase {
    func testCopyFromSQLiteReadsBackTheSame() async throws {
        let cluster = try PostgresTestCluster.forTest()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try StateStore(path: folder.appendingPathComponent("lookout.sqlite3").path)
        let sqlite = BackendUnderTest(store: source) { _ in }
        try await StateBackendBehaviour.keyValueRoundTrip(sqlite)
        try await StateBackendBehaviour.notifyQueueLifecycle(sqlite)
        _ = try await source.insertNotification(StateBackendBehaviour.message("kept"), now: StateBackendBehaviour.now)
        try await StateBackendBehaviour.releaseGivesBudgetBackOnce(sqlite)
        try await StateBackendBehaviour.acksBelongToTheirEpisode(sqlite)
        try await StateBackendBehaviour.snoozesBelongToTheirEpisode(sqlite)
        try await StateBackendBehaviour.outboxQueue(sqlite)
        try await StateBackendBehaviour.mirror(sqlite)
        try await source.putCatalogueProfiles([CatalogueProfile(
            service: "nightscout", name: "child1", body: "url = \"https://one.example\"", updatedAt: StateBackendBehaviour.now)])
        _ = try await source.claimOneTimeCode("123456", counter: 7, pumps: ["pump"], now: StateBackendBehaviour.now)
        for delay in [0.0, 5] {  // the second is counted on the first (audit_repeats)
            try await source.append(AuditEntry(
                ticketID: nil, time: StateBackendBehaviour.now + delay, site: "https://ns.example",
                command: StateBackendBehaviour.bolus(9), source: "x.lua", verdict: .refused, reasonCode: "hourly_limit",
                reason: "over", phase: .refused, detail: "bolus 9 U"))
        }

        let location = try PostgresLocation.parse(try cluster.createDatabase())
        let target = try await PostgresStateStore.open(location: location, password: cluster.adminPassword)
        defer { target.close() }
        let counts = try await StateCopy.copy(from: source, to: target)
        XCTAssertEqual(counts.map(\.table), StateCopy.tables.map(\.name))
        XCTAssertTrue(counts.allSatisfy { $0.source == $0.target }, "\(counts)")
        XCTAssertTrue(counts.allSatisfy { $0.source > 0 }, "something in every table: \(counts)")

        let entries = try await target.entries(script: "a.lua")
        let sourceEntries = try await source.entries(script: "a.lua")
        XCTAssertEqual(entries.map(\.key), sourceEntries.map(\.key))
        XCTAssertEqual(entries.map(\.value), sourceEntries.map(\.value), "values byte for byte (the non-UTF-8 one too)")
        let audit = try await target.auditEntries(site: nil, limit: 100)
        let sourceAudit = try await source.auditEntries(site: nil, limit: 100)
        XCTAssertEqual(audit, sourceAudit, "the audit log in the same order, every entry the same")
        let catalogue = try await target.catalogueProfiles()
        let sourceCatalogue = try await source.catalogueProfiles()
        XCTAssertEqual(catalogue, sourceCatalogue)
        let alerts = try await target.alertStatuses()
        let sourceAlerts = try await source.alertStatuses()
        XCTAssertEqual(alerts, sourceAlerts)
        let notes = try await target.notifications(states: Set(NotifyItem.State.allCases), limit: 100)
        let sourceNotes = try await source.notifications(states: Set(NotifyItem.State.allCases), limit: 100)
        XCTAssertEqual(notes, sourceNotes)
        let items = try await target.items(site: nil, states: Set(OutboxItem.State.allCases), limit: 100)
        let sourceItems = try await source.items(site: nil, states: Set(OutboxItem.State.allCases), limit: 100)
        XCTAssertEqual(items, sourceItems)
        let docs = try await target.documents(site: "https://ns.example", collection: .entries, from: nil, through: nil,
                                              limit: nil, includeDeleted: true)
        let sourceDocs = try await source.documents(site: "https://ns.example", collection: .entries, from: nil, through: nil,
                                                    limit: nil, includeDeleted: true)
        XCTAssertEqual(docs, sourceDocs)
        let cursor = try await target.cursor(site: "https://ns.example", collection: .entries)
        let sourceCursor = try await source.cursor(site: "https://ns.example", collection: .entries)
        XCTAssertEqual(cursor, sourceCursor)
        // The copied ledger still counts: the released 4 U does not, the later 1 U does.
        let allowed = try await StateBackendBehaviour.reserveBolus(target, site: "https://ns.example", units: 3, budget: 4,
                                                                  at: StateBackendBehaviour.now + 240)
        XCTAssertTrue(allowed)
        let over = try await StateBackendBehaviour.reserveBolus(target, site: "https://ns.example", units: 1, budget: 4,
                                                               at: StateBackendBehaviour.now + 250)
        XCTAssertFalse(over)

        do {
            _ = try await StateCopy.copy(from: source, to: target)
            XCTFail("copied into a database that holds state")
        } catch {
            XCTAssertTrue("\(error)".contains("already holds state"), "\(error)")
        }
        let after = try await target.auditLog(site: nil, limit: 100)
        let before = try await source.auditLog(site: nil, limit: 100)
        XCTAssertEqual(after.reduce(0) { $0 + 1 + $1.repeats }, before.reduce(0) { $0 + 1 + $1.repeats } + 2,
                       "the refused copy added nothing (a refusal may be counted on an earlier row)")
    }
}
