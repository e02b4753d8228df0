import Foundation
import PostgresNIO

/// The PostgreSQL schema: the same named migrations as the SQLite store (`StateStore.migrations`),
/// in PostgreSQL's types (`bytea` for bytes, `double precision` for the epoch seconds SQLite keeps
/// as REAL, `text COLLATE "C"` for keys so that key order is byte order as in SQLite). Applied
/// migrations are listed in `lookout_migrations`. Append new ones with the name the SQLite
/// migration has; never edit one that has shipped.
///
/// The audit log is append-only in the database: a trigger refuses every UPDATE, DELETE and
/// TRUNCATE (whoever asks, the table's owner included), and those privileges are revoked from
/// PUBLIC, so an application role given only SELECT and INSERT cannot even try.
extension PostgresStateStore {
    /// A named schema change: statements run in order, in the migration's transaction.
    public typealias Migration = (name: String, statements: [String])

    /// Every migration, in order.
    public static let migrations: [Migration] = [
        ("v1-kv", [
            """
            CREATE TABLE kv (
                script text COLLATE "C" NOT NULL,
                key text COLLATE "C" NOT NULL,
                value bytea NOT NULL,
                updated_at double precision NOT NULL,
                PRIMARY KEY (script, key)
            )
            """,
        ]),
        ("v2-outbox", [
            """
            CREATE TABLE outbox (
                site text COLLATE "C" NOT NULL,
                identifier text COLLATE "C" NOT NULL,
                collection text NOT NULL,
                body bytea NOT NULL,
                source text,
                created double precision NOT NULL,
                state text NOT NULL,
                attempts integer NOT NULL,
                next_attempt double precision NOT NULL,
                last_error text,
                last_status integer,
                sent_at double precision,
                deduplicated boolean,
                PRIMARY KEY (site, identifier)
            )
            """,
            "CREATE INDEX outbox_due ON outbox (site, state, next_attempt)",
            "CREATE INDEX outbox_created ON outbox (created)",
        ]),
        ("v3-sync", [
            """
            CREATE TABLE sync_cursor (
                site text COLLATE "C" NOT NULL,
                collection text COLLATE "C" NOT NULL,
                cursor text NOT NULL,
                updated_at double precision NOT NULL,
                PRIMARY KEY (site, collection)
            )
            """,
            """
            CREATE TABLE sync_mirror (
                site text COLLATE "C" NOT NULL,
                collection text COLLATE "C" NOT NULL,
                identifier text COLLATE "C" NOT NULL,
                date bigint,
                srv_modified bigint,
                is_valid boolean NOT NULL,
                raw bytea NOT NULL,
                PRIMARY KEY (site, collection, identifier)
            )
            """,
            "CREATE INDEX sync_mirror_date ON sync_mirror (site, collection, date, identifier)",
        ]),
        ("v4-audit", [
            """
            CREATE TABLE audit (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id text NOT NULL UNIQUE,
                ticket text,
                time double precision NOT NULL,
                site text NOT NULL,
                source text NOT NULL,
                verdict text NOT NULL,
                reason_code text,
                reason text,
                phase text NOT NULL,
                detail text NOT NULL,
                command text NOT NULL
            )
            """,
            "CREATE INDEX audit_site_time ON audit (site, time)",
            "CREATE INDEX audit_ticket ON audit (ticket)",
            """
            CREATE FUNCTION lookout_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
            END $$
            """,
            """
            CREATE TRIGGER audit_no_update_delete BEFORE UPDATE OR DELETE ON audit
                FOR EACH ROW EXECUTE FUNCTION lookout_audit_append_only()
            """,
            """
            CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
                FOR EACH STATEMENT EXECUTE FUNCTION lookout_audit_append_only()
            """,
            "REVOKE UPDATE, DELETE, TRUNCATE ON audit FROM PUBLIC",
        ]),
        ("v5-alerts", [
            """
            CREATE TABLE alert_state (
                id text COLLATE "C" PRIMARY KEY,
                script text NOT NULL,
                title text NOT NULL,
                severity text NOT NULL,
                state text NOT NULL,
                since double precision NOT NULL,
                episode bigint NOT NULL,
                data text NOT NULL,
                updated_at double precision NOT NULL
            )
            """,
            """
            CREATE TABLE alert_acks (
                id text COLLATE "C" NOT NULL,
                episode bigint NOT NULL,
                acked_by text NOT NULL,
                acked_at double precision NOT NULL,
                PRIMARY KEY (id, episode)
            )
            """,
            """
            CREATE TABLE notify_outbox (
                id text COLLATE "C" PRIMARY KEY,
                channel text NOT NULL,
                message text NOT NULL,
                source text,
                created double precision NOT NULL,
                state text NOT NULL,
                attempts integer NOT NULL,
                next_attempt double precision NOT NULL,
                claimed_at double precision,
                last_error text,
                last_status integer,
                sent_at double precision
            )
            """,
            "CREATE INDEX notify_outbox_due ON notify_outbox (state, next_attempt)",
        ]),
        ("v6-remote-budget-keys", [
            """
            CREATE TABLE remote_budget_keys (
                key text COLLATE "C" NOT NULL,
                ticket text COLLATE "C" NOT NULL,
                time double precision NOT NULL,
                PRIMARY KEY (key, ticket)
            )
            """,
            "CREATE INDEX remote_budget_keys_time ON remote_budget_keys (key, time)",
            "CREATE INDEX remote_budget_keys_ticket ON remote_budget_keys (ticket)",
            """
            CREATE TABLE remote_otp_codes (
                pump text COLLATE "C" NOT NULL,
                counter bigint NOT NULL,
                code text NOT NULL,
                time double precision NOT NULL,
                PRIMARY KEY (pump, counter)
            )
            """,
        ]),
        ("v6-audit-repeats", [
            """
            CREATE TABLE audit_repeats (
                seq bigint PRIMARY KEY REFERENCES audit (seq),
                count bigint NOT NULL,
                last_time double precision NOT NULL
            )
            """,
            """
            CREATE FUNCTION lookout_audit_repeats_only_grow() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP <> 'UPDATE' THEN
                    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
                END IF;
                IF NEW.seq IS DISTINCT FROM OLD.seq OR NEW.count < OLD.count OR NEW.last_time < OLD.last_time THEN
                    RAISE EXCEPTION 'audit repeat counts only grow' USING ERRCODE = 'insufficient_privilege';
                END IF;
                RETURN NEW;
            END $$
            """,
            """
            CREATE TRIGGER audit_repeats_only_grow BEFORE UPDATE OR DELETE ON audit_repeats
                FOR EACH ROW EXECUTE FUNCTION lookout_audit_repeats_only_grow()
            """,
            """
            CREATE TRIGGER audit_repeats_no_truncate BEFORE TRUNCATE ON audit_repeats
                FOR EACH STATEMENT EXECUTE FUNCTION lookout_audit_repeats_only_grow()
            """,
            "REVOKE DELETE, TRUNCATE ON audit_repeats FROM PUBLIC",
        ]),
        ("v7-outbox-source", [
            "CREATE INDEX outbox_source ON outbox (source, state)",
        ]),
        ("v8-cluster", [
            """
            CREATE TABLE cluster_instances (
                cluster text COLLATE "C" NOT NULL,
                instance text COLLATE "C" NOT NULL,
                host text NOT NULL,
                pid integer NOT NULL,
                started_at double precision NOT NULL,
                heartbeat_at double precision NOT NULL,
                clock_skew double precision NOT NULL DEFAULT 0,
                ttl double precision NOT NULL,
                PRIMARY KEY (cluster, instance)
            )
            """,
            """
            CREATE TABLE cluster_leases (
                cluster text COLLATE "C" NOT NULL,
                work text COLLATE "C" NOT NULL,
                holder text COLLATE "C",
                fence bigint NOT NULL,
                expires_at double precision NOT NULL,
                acquired_at double precision NOT NULL,
                PRIMARY KEY (cluster, work)
            )
            """,
        ]),
        ("v9-catalogue", [
            """
            CREATE TABLE profile_catalogue (
                service text COLLATE "C" NOT NULL,
                name text COLLATE "C" NOT NULL,
                body text NOT NULL,
                updated_at double precision NOT NULL,
                PRIMARY KEY (service, name)
            )
            """,
        ]),
        ("v10-alert-snoozes", [
            """
            CREATE TABLE alert_snoozes (
                id text COLLATE "C" NOT NULL,
                episode bigint NOT NULL,
                snoozed_by text NOT NULL,
                snoozed_at double precision NOT NULL,
                snoozed_until double precision NOT NULL,
                PRIMARY KEY (id, episode)
            )
            """,
        ]),
    ]

    /// The advisory lock key migrations take (any 64-bit number unique to Lookout).
    static let migrationLock: Int64 = 0x4C6F_6F6B_6F75_7401

    /// Applies the migrations not yet applied, each in its own transaction, under a
    /// transaction-level advisory lock so that instances starting together take turns. A role
    /// without CREATE privilege can open a database whose schema is current (it only reads
    /// `lookout_migrations`).
    func migrate() async throws(StateStoreError) {
        for migration in Self.migrations {
            try await transaction(prepare: false) { [self] connection in
                try await self.execute("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", on: connection)
                let exists = try await self.rows("SELECT to_regclass('lookout_migrations') IS NOT NULL AS present", on: connection)
                if try exists.first?["present"].decode(Bool.self) != true {
                    try await self.execute("""
                        CREATE TABLE lookout_migrations (
                            name text PRIMARY KEY,
                            applied_at timestamptz NOT NULL DEFAULT now()
                        )
                        """, on: connection)
                }
                let done = try await self.rows("SELECT 1 FROM lookout_migrations WHERE name = \(migration.name)", on: connection)
                guard done.isEmpty else { return }
                for statement in migration.statements {
                    try await self.execute(PostgresQuery(unsafeSQL: statement), on: connection)
                }
                try await self.execute("INSERT INTO lookout_migrations (name) VALUES (\(migration.name))", on: connection)
            }
        }
    }

    /// The applied migrations, in the order they were applied.
    public func appliedMigrations() async throws(StateStoreError) -> [String] {
        try await withConnection { [self] connection in
            try await self.rows("SELECT name FROM lookout_migrations ORDER BY applied_at, name", on: connection)
                .map { try $0["name"].decode(String.self) }
        }
    }
}
