import Foundation
import GRDB
import XCTest

@testable import LookoutStore

/// The store behaviours (`StateBackendBehaviour`) on the SQLite backend: a file store (WAL, a
/// pool of connections, as `lookout serve` uses it), removed after each test.
final class StateBackendSQLiteTests: XCTestCase {
    private var folder: URL!

    override func setUp() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func backend() throws -> BackendUnderTest {
        let store = try StateStore(path: folder.appendingPathComponent("lookout.sqlite3").path)
        return BackendUnderTest(store: store) { sql in try await store.database.write { try $0.execute(sql: sql) } }
    }

    func testMigrationsShareNames() async throws { try await StateBackendBehaviour.migrationsShareNames(backend()) }
    func testKeyValueRoundTrip() async throws { try await StateBackendBehaviour.keyValueRoundTrip(backend()) }
    func testProfileCatalogue() async throws { try await StateBackendBehaviour.profileCatalogue(backend()) }
    func testQuotaRefusesAndWritesNothing() async throws { try await StateBackendBehaviour.quotaRefusesAndWritesNothing(backend()) }
    func testQuotaHoldsUnderConcurrentWriters() async throws {
        try await StateBackendBehaviour.quotaHoldsUnderConcurrentWriters(backend())
    }
    func testNotifyQueueLifecycle() async throws { try await StateBackendBehaviour.notifyQueueLifecycle(backend()) }
    func testClaimsAreExclusive() async throws { try await StateBackendBehaviour.claimsAreExclusive(backend()) }
    func testLedgerBudgetHoldsUnderConcurrency() async throws {
        try await StateBackendBehaviour.ledgerBudgetHoldsUnderConcurrency(backend())
    }
    func testReleaseGivesBudgetBackOnce() async throws { try await StateBackendBehaviour.releaseGivesBudgetBackOnce(backend()) }
    func testAuditIsAppendOnlyInTheDatabase() async throws {
        try await StateBackendBehaviour.auditIsAppendOnlyInTheDatabase(backend())
    }
    func testAcksBelongToTheirEpisode() async throws { try await StateBackendBehaviour.acksBelongToTheirEpisode(backend()) }
    func testSnoozesBelongToTheirEpisode() async throws { try await StateBackendBehaviour.snoozesBelongToTheirEpisode(backend()) }
    func testOutboxQueue() async throws { try await StateBackendBehaviour.outboxQueue(backend()) }
    func testMirror() async throws { try await StateBackendBehaviour.mirror(backend()) }
    func testBudgetKeysShareOneBudget() async throws { try await StateBackendBehaviour.budgetKeysShareOneBudget(backend()) }
    func testOneTimeCodeClaimedOnce() async throws { try await StateBackendBehaviour.oneTimeCodeClaimedOnce(backend()) }
    func testAuditRepeatsOnlyGrow() async throws { try await StateBackendBehaviour.auditRepeatsOnlyGrow(backend()) }
    func testOutboxQuotaPerScript() async throws { try await StateBackendBehaviour.outboxQuotaPerScript(backend()) }
    func testAckLinkEpisode() async throws { try await StateBackendBehaviour.ackLinkEpisode(backend()) }
    func testLeasesHaveOneHolderAndGrowingFences() async throws {
        try await StateBackendBehaviour.leasesHaveOneHolderAndGrowingFences(backend())
    }
    func testConcurrentAcquisitionsHaveOneWinner() async throws {
        try await StateBackendBehaviour.concurrentAcquisitionsHaveOneWinner(backend())
    }
    func testFencedReservationNeedsTheLease() async throws {
        try await StateBackendBehaviour.fencedReservationNeedsTheLease(backend())
    }
}
