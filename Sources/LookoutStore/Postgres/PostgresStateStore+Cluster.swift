import Foundation
import PostgresNIO

/// The leases of `serve --cluster` on PostgreSQL (`cluster_instances`, `cluster_leases`), timed
/// by the database's clock (`clock_timestamp()`), so that instances whose clocks disagree still
/// agree on who holds what. An acquisition is one conditional upsert: of two instances taking
/// the same free lease, the second finds it held and gets nothing.
extension PostgresStateStore: ClusterLeaseStore {
    /// The database's clock, in epoch seconds (SQL).
    static let databaseNow = "extract(epoch from clock_timestamp())::double precision"

    public func clusterHeartbeat(cluster: String, instance: ClusterInstance, held: [String: Int64], ttl: TimeInterval)
        async throws(StateStoreError) -> ClusterRenewal
    {
        let local = Date().timeIntervalSince1970
        let works = Array(held.keys), fences = works.map { held[$0]! }
        return try await transaction { [self] connection in
            let now = try await self.databaseTime(on: connection)
            try await self.execute("""
                INSERT INTO cluster_instances (cluster, instance, host, pid, started_at, heartbeat_at, clock_skew, ttl)
                VALUES (\(cluster), \(instance.id), \(instance.host), \(instance.pid),
                        \(instance.startedAt.timeIntervalSince1970), \(now), \(local - now), \(ttl))
                ON CONFLICT (cluster, instance) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at,
                    clock_skew = EXCLUDED.clock_skew, host = EXCLUDED.host, pid = EXCLUDED.pid, ttl = EXCLUDED.ttl
                """, on: connection)
            var renewed: [String: Int64] = [:]
            if !works.isEmpty {
                let rows = try await self.rows("""
                    UPDATE cluster_leases SET expires_at = \(now + ttl)
                    WHERE cluster = \(cluster) AND holder = \(instance.id)
                      AND (work, fence) IN (SELECT * FROM unnest(\(works)::text[], \(fences)::bigint[]))
                    RETURNING work, fence
                    """, on: connection)
                for row in rows { renewed[try row["work"].decode(String.self)] = try row["fence"].decode(Int64.self) }
            }
            return ClusterRenewal(now: Date(timeIntervalSince1970: now), renewed: renewed)
        }
    }

    public func acquireLease(cluster: String, work: String, instance: String, ttl: TimeInterval)
        async throws(StateStoreError) -> Int64?
    {
        try await transaction { [self] connection in
            let now = try await self.databaseTime(on: connection)
            return try await self.rows("""
                INSERT INTO cluster_leases AS l (cluster, work, holder, fence, expires_at, acquired_at)
                VALUES (\(cluster), \(work), \(instance), 1, \(now + ttl), \(now))
                ON CONFLICT (cluster, work) DO UPDATE SET holder = EXCLUDED.holder, fence = l.fence + 1,
                    expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at
                WHERE l.holder IS NULL OR l.expires_at <= EXCLUDED.acquired_at
                RETURNING fence
                """, on: connection).first.map { try $0["fence"].decode(Int64.self) }
        }
    }

    public func releaseLease(cluster: String, work: String, instance: String, fence: Int64, retire: Bool) async throws(StateStoreError) {
        try await transaction { [self] connection in
            let now = try await self.databaseTime(on: connection)
            if retire {
                try await self.execute("""
                    DELETE FROM cluster_leases
                    WHERE cluster = \(cluster) AND work = \(work) AND holder = \(instance) AND fence = \(fence)
                    """, on: connection)
            } else {
                try await self.execute("""
                    UPDATE cluster_leases SET holder = NULL, expires_at = \(now)
                    WHERE cluster = \(cluster) AND work = \(work) AND holder = \(instance) AND fence = \(fence)
                    """, on: connection)
            }
        }
    }

    public func leaseIsHeld(_ fence: LeaseFence) async throws(StateStoreError) -> Bool {
        try await transaction { [self] connection in try await self.leaseIsHeld(fence, on: connection) }
    }

    /// Whether `fence` is the live lease of its work, read in the caller's transaction with a
    /// share lock on the lease's row: an acquisition by another instance (an UPDATE of that row)
    /// waits until the caller's transaction ends, so what the caller writes under the lease is
    /// committed before anyone else can hold it.
    func leaseIsHeld(_ fence: LeaseFence, on connection: PostgresConnection) async throws -> Bool {
        let now = try await databaseTime(on: connection)
        return try await !rows("""
            SELECT 1 FROM cluster_leases WHERE cluster = \(fence.cluster) AND work = \(fence.work)
              AND holder = \(fence.instance) AND fence = \(fence.fence) AND expires_at > \(now)
            FOR SHARE
            """, on: connection).isEmpty
    }

    public func clusterView(cluster: String) async throws(StateStoreError) -> ClusterView {
        try await transaction { [self] connection in
            let now = try await self.databaseTime(on: connection)
            let instances = try await self.rows("""
                SELECT instance, host, pid, started_at, heartbeat_at, clock_skew, ttl FROM cluster_instances
                WHERE cluster = \(cluster) ORDER BY instance
                """, on: connection).map { row in
                ClusterInstance(
                    id: try row["instance"].decode(String.self), host: try row["host"].decode(String.self),
                    pid: try row["pid"].decode(Int.self),
                    startedAt: Date(timeIntervalSince1970: try row["started_at"].decode(Double.self)),
                    heartbeatAt: Date(timeIntervalSince1970: try row["heartbeat_at"].decode(Double.self)),
                    clockSkew: try row["clock_skew"].decode(Double.self), ttl: try row["ttl"].decode(Double.self))
            }
            let leases = try await self.rows("""
                SELECT work, holder, fence, expires_at, acquired_at FROM cluster_leases WHERE cluster = \(cluster) ORDER BY work
                """, on: connection).map { row in
                ClusterLease(
                    work: try row["work"].decode(String.self), holder: try row["holder"].decode(String?.self),
                    fence: try row["fence"].decode(Int64.self),
                    expiresAt: Date(timeIntervalSince1970: try row["expires_at"].decode(Double.self)),
                    acquiredAt: Date(timeIntervalSince1970: try row["acquired_at"].decode(Double.self)))
            }
            return ClusterView(cluster: cluster, now: Date(timeIntervalSince1970: now), instances: instances, leases: leases)
        }
    }

    public func leaveCluster(cluster: String, instance: String) async throws(StateStoreError) {
        try await transaction { [self] connection in
            let now = try await self.databaseTime(on: connection)
            try await self.execute("""
                UPDATE cluster_leases SET holder = NULL, expires_at = \(now) WHERE cluster = \(cluster) AND holder = \(instance)
                """, on: connection)
            try await self.execute("DELETE FROM cluster_instances WHERE cluster = \(cluster) AND instance = \(instance)", on: connection)
        }
    }

    /// The database's time now, in epoch seconds.
    func databaseTime(on connection: PostgresConnection) async throws -> Double {
        try await rows(PostgresQuery(unsafeSQL: "SELECT \(Self.databaseNow) AS now"), on: connection)
            .first.map { try $0["now"].decode(Double.self) } ?? Date().timeIntervalSince1970
    }
}
