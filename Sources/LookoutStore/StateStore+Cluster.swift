import Foundation
import GRDB

/// The leases of `serve --cluster` in the SQLite file: several instances on one machine (one
/// clock) sharing one state directory. Each change is one `BEGIN IMMEDIATE` transaction, so
/// two instances cannot both take a free lease.
extension StateStore: ClusterLeaseStore {
    static let clusterMigrations: [Migration] = [
        ("v8-cluster", { db in
            try db.execute(sql: """
                CREATE TABLE cluster_instances (
                    cluster TEXT NOT NULL,
                    instance TEXT NOT NULL,
                    host TEXT NOT NULL,
                    pid INTEGER NOT NULL,
                    started_at REAL NOT NULL,
                    heartbeat_at REAL NOT NULL,
                    clock_skew REAL NOT NULL DEFAULT 0,
                    ttl REAL NOT NULL,
                    PRIMARY KEY (cluster, instance)
                ) WITHOUT ROWID;
                CREATE TABLE cluster_leases (
                    cluster TEXT NOT NULL,
                    work TEXT NOT NULL,
                    holder TEXT,
                    fence INTEGER NOT NULL,
                    expires_at REAL NOT NULL,
                    acquired_at REAL NOT NULL,
                    PRIMARY KEY (cluster, work)
                ) WITHOUT ROWID;
                """)
        }),
    ]

    public func clusterHeartbeat(cluster: String, instance: ClusterInstance, held: [String: Int64], ttl: TimeInterval)
        async throws(StateStoreError) -> ClusterRenewal
    {
        try await write { db in
            let now = Date().timeIntervalSince1970
            try db.execute(sql: """
                INSERT INTO cluster_instances (cluster, instance, host, pid, started_at, heartbeat_at, clock_skew, ttl)
                VALUES (?, ?, ?, ?, ?, ?, 0, ?)
                ON CONFLICT (cluster, instance) DO UPDATE SET heartbeat_at = excluded.heartbeat_at,
                    host = excluded.host, pid = excluded.pid, ttl = excluded.ttl
                """, arguments: [cluster, instance.id, instance.host, instance.pid, instance.startedAt.timeIntervalSince1970, now, ttl])
            var renewed: [String: Int64] = [:]
            for (work, fence) in held {
                try db.execute(sql: """
                    UPDATE cluster_leases SET expires_at = ? WHERE cluster = ? AND work = ? AND holder = ? AND fence = ?
                    """, arguments: [now + ttl, cluster, work, instance.id, fence])
                if db.changesCount > 0 { renewed[work] = fence }
            }
            return ClusterRenewal(now: Date(timeIntervalSince1970: now), renewed: renewed)
        }
    }

    public func acquireLease(cluster: String, work: String, instance: String, ttl: TimeInterval)
        async throws(StateStoreError) -> Int64?
    {
        try await write { db in
            let now = Date().timeIntervalSince1970
            return try Int64.fetchOne(db, sql: """
                INSERT INTO cluster_leases (cluster, work, holder, fence, expires_at, acquired_at) VALUES (?, ?, ?, 1, ?, ?)
                ON CONFLICT (cluster, work) DO UPDATE SET holder = excluded.holder, fence = cluster_leases.fence + 1,
                    expires_at = excluded.expires_at, acquired_at = excluded.acquired_at
                WHERE cluster_leases.holder IS NULL OR cluster_leases.expires_at <= excluded.acquired_at
                RETURNING fence
                """, arguments: [cluster, work, instance, now + ttl, now])
        }
    }

    public func releaseLease(cluster: String, work: String, instance: String, fence: Int64, retire: Bool) async throws(StateStoreError) {
        try await write { db in
            if retire {
                try db.execute(sql: "DELETE FROM cluster_leases WHERE cluster = ? AND work = ? AND holder = ? AND fence = ?",
                               arguments: [cluster, work, instance, fence])
            } else {
                try db.execute(sql: """
                    UPDATE cluster_leases SET holder = NULL, expires_at = ? WHERE cluster = ? AND work = ? AND holder = ? AND fence = ?
                    """, arguments: [Date().timeIntervalSince1970, cluster, work, instance, fence])
            }
        }
    }

    public func leaseIsHeld(_ fence: LeaseFence) async throws(StateStoreError) -> Bool {
        try await access { db in try StateStore.leaseIsHeld(fence, in: db) }
    }

    /// Whether `fence` is the live lease of its work, read in the caller's transaction.
    static func leaseIsHeld(_ fence: LeaseFence, in db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT 1 FROM cluster_leases WHERE cluster = ? AND work = ? AND holder = ? AND fence = ? AND expires_at > ?
            """, arguments: [fence.cluster, fence.work, fence.instance, fence.fence, Date().timeIntervalSince1970]) == true
    }

    public func clusterView(cluster: String) async throws(StateStoreError) -> ClusterView {
        try await access { db in
            let instances = try Row.fetchAll(db, sql: """
                SELECT * FROM cluster_instances WHERE cluster = ? ORDER BY instance
                """, arguments: [cluster]).map { row in
                ClusterInstance(id: row["instance"], host: row["host"], pid: row["pid"],
                                startedAt: Date(timeIntervalSince1970: row["started_at"]),
                                heartbeatAt: Date(timeIntervalSince1970: row["heartbeat_at"]), clockSkew: row["clock_skew"],
                                ttl: row["ttl"])
            }
            let leases = try Row.fetchAll(db, sql: "SELECT * FROM cluster_leases WHERE cluster = ? ORDER BY work",
                                          arguments: [cluster]).map { row in
                ClusterLease(work: row["work"], holder: row["holder"], fence: row["fence"],
                             expiresAt: Date(timeIntervalSince1970: row["expires_at"]),
                             acquiredAt: Date(timeIntervalSince1970: row["acquired_at"]))
            }
            return ClusterView(cluster: cluster, now: Date(), instances: instances, leases: leases)
        }
    }

    public func leaveCluster(cluster: String, instance: String) async throws(StateStoreError) {
        try await write { db in
            try db.execute(sql: "UPDATE cluster_leases SET holder = NULL, expires_at = ? WHERE cluster = ? AND holder = ?",
                           arguments: [Date().timeIntervalSince1970, cluster, instance])
            try db.execute(sql: "DELETE FROM cluster_instances WHERE cluster = ? AND instance = ?", arguments: [cluster, instance])
        }
    }
}
