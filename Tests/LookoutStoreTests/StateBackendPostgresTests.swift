import Foundation
import LookoutConfig
import LookoutTestSupport
import XCTest

@testable import LookoutStore

/// The store behaviours (`StateBackendBehaviour`) on the PostgreSQL backend: a real server
/// (`PostgresTestCluster`, a throwaway cluster on a free loopback port), a new database per test,
/// reached over TCP with the administrator's password.
final class StateBackendPostgresTests: XCTestCase {
    private var stores: [PostgresStateStore] = []

    override func tearDown() async throws {
        for store in stores { store.close() }
        stores = []
    }

    private func backend() async throws -> BackendUnderTest {
        let cluster = try PostgresTestCluster.forTest()
        let url = try cluster.createDatabase()
        let database = String(url.split(separator: "/").last!)
        let store = try await PostgresStateStore.open(location: try PostgresLocation.parse(url), password: cluster.adminPassword)
        stores.append(store)
        return BackendUnderTest(store: store) { sql in try cluster.psql(sql, database: database) }
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

    // MARK: PostgreSQL only

    /// Two instances opening one new database at once: the migrations are applied once.
    func testConcurrentOpensMigrateOnce() async throws {
        let cluster = try PostgresTestCluster.forTest()
        let location = try PostgresLocation.parse(try cluster.createDatabase())
        let password = cluster.adminPassword
        let opened = try await withThrowingTaskGroup(of: PostgresStateStore.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresStateStore.open(location: location, password: password) } }
            var all: [PostgresStateStore] = []
            for try await store in group { all.append(store) }
            return all
        }
        stores += opened
        let applied = try await opened[0].appliedMigrations()
        XCTAssertEqual(applied, PostgresStateStore.migrations.map(\.name))
    }

    /// The least-privilege setup of the README: an owner role creates the schema; the role
    /// Lookout runs as may read and write rows and only append to the audit log.
    func testLeastPrivilegeRole() async throws {
        let cluster = try PostgresTestCluster.forTest()
        let suffix = "\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
        let owner = "lookout_owner_\(suffix)", app = "lookout_app_\(suffix)", database = "least_\(suffix)"
        try cluster.psql("CREATE ROLE \(owner) LOGIN PASSWORD 'owner-pw'")
        try cluster.psql("CREATE DATABASE \(database) OWNER \(owner)")
        try cluster.psql("REVOKE CREATE ON SCHEMA public FROM PUBLIC; REVOKE ALL ON DATABASE \(database) FROM PUBLIC",
                         database: database)
        let ownerStore = try await PostgresStateStore.open(
            location: try PostgresLocation.parse(cluster.url(database: database, user: owner)), password: "owner-pw")
        stores.append(ownerStore)
        try cluster.psql("""
            CREATE ROLE \(app) LOGIN PASSWORD 'app-pw';
            GRANT CONNECT ON DATABASE \(database) TO \(app);
            GRANT USAGE ON SCHEMA public TO \(app);
            GRANT SELECT, INSERT, UPDATE, DELETE ON kv, outbox, sync_cursor, sync_mirror, alert_state, alert_acks, alert_snoozes, notify_outbox,
                remote_budget_keys, remote_otp_codes TO \(app);
            GRANT SELECT, INSERT ON audit TO \(app);
            GRANT SELECT, INSERT, UPDATE ON audit_repeats TO \(app);
            GRANT SELECT ON lookout_migrations TO \(app);
            GRANT SELECT ON profile_catalogue TO \(app);
            """, database: database)
        try await ownerStore.putCatalogueProfiles([
            CatalogueProfile(service: "nightscout", name: "child1", body: "url = \"https://one.example\"", updatedAt: Date()),
        ])
        let appStore = try await PostgresStateStore.open(
            location: try PostgresLocation.parse(cluster.url(database: database, user: app)), password: "app-pw")
        stores.append(appStore)
        let appBackend = BackendUnderTest(store: appStore) { _ in }
        try await StateBackendBehaviour.keyValueRoundTrip(appBackend)
        try await StateBackendBehaviour.notifyQueueLifecycle(appBackend)
        try await StateBackendBehaviour.releaseGivesBudgetBackOnce(appBackend)
        try await StateBackendBehaviour.acksBelongToTheirEpisode(appBackend)
        try await StateBackendBehaviour.snoozesBelongToTheirEpisode(appBackend)
        try await StateBackendBehaviour.outboxQueue(appBackend)
        try await StateBackendBehaviour.mirror(appBackend)
        let catalogue = try await appStore.catalogueProfiles()
        XCTAssertEqual(catalogue.map(\.name), ["child1"], "the instances' role reads the profile catalogue")
        // As the application role, rewriting the audit log or the catalogue is not even permitted.
        for sql in ["UPDATE profile_catalogue SET body = 'url = \"https://elsewhere.example\"'", "UPDATE audit SET detail = 'x'", "DELETE FROM audit", "TRUNCATE audit", "ALTER TABLE audit DISABLE TRIGGER ALL",
                    "CREATE TABLE sneaky (x int)"] {
            XCTAssertThrowsError(try cluster.psql("SET ROLE \(app); \(sql)", database: database), sql) { error in
                XCTAssertTrue("\(error)".contains("permission denied") || "\(error)".contains("must be owner"), "\(sql): \(error)")
            }
        }
        // The owner (and a superuser) are stopped by the trigger instead.
        XCTAssertThrowsError(try cluster.psql("SET ROLE \(owner); DELETE FROM audit", database: database)) { error in
            XCTAssertTrue("\(error)".contains("append-only"), "\(error)")
        }
    }

    /// A wrong password is refused with a message naming the database and never the password.
    func testWrongPasswordIsAClearError() async throws {
        let cluster = try PostgresTestCluster.forTest()
        let location = try PostgresLocation.parse(try cluster.createDatabase())
        do {
            stores.append(try await PostgresStateStore.open(location: location, password: "wrong-secret-123"))
            XCTFail("connected with a wrong password")
        } catch {
            XCTAssertTrue(error.description.contains(location.description), error.description)
            XCTAssertTrue(error.description.contains("password authentication failed"), error.description)
            XCTAssertFalse(error.description.contains("wrong-secret-123"))
            XCTAssertFalse(error.description.contains(cluster.adminPassword))
        }
    }
}
