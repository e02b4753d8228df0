import Foundation
import GRDB
import PostgresNIO

/// `lookout state migrate --to postgresql://…`: copies a SQLite state database into an empty
/// PostgreSQL one (store, outbox, notify queue, audit and its repeat counts, alert state and
/// acknowledgements, sync mirror, the ledger's budget keys and one-time codes), in one PostgreSQL transaction that ends with a count of every table on both sides:
/// the copy is committed only when every count matches, so a failed copy leaves nothing behind.
/// The audit log keeps its order (rows are appended in their SQLite order) and every entry's id.
public enum StateCopy {
    /// One table's rows before and after.
    public struct TableCount: Sendable, Equatable {
        /// The table.
        public var table: String
        /// Rows in the SQLite file.
        public var source: Int
        /// Rows in PostgreSQL after the copy.
        public var target: Int
    }

    /// Why nothing was copied.
    public enum CopyError: Error, Sendable, CustomStringConvertible {
        /// The target already holds state.
        case targetNotEmpty(table: String, rows: Int)
        /// The counts differ after the copy (rolled back).
        case countsDiffer([TableCount])

        /// The message.
        public var description: String {
            switch self {
            case .targetNotEmpty(let table, let rows):
                return "the target database already holds state (\(table): \(rows) rows); copy into an empty database"
            case .countsDiffer(let counts):
                let differing = counts.filter { $0.source != $0.target }.map { "\($0.table) \($0.source) → \($0.target)" }
                return "the copy does not match the source (\(differing.joined(separator: ", "))); nothing was copied"
            }
        }
    }

    /// How a column's SQLite value becomes a PostgreSQL parameter.
    enum Kind: Sendable { case text, bytes, double, integer, boolean }

    /// The copied tables, in dependency-free order, with their columns (the audit's `seq` is
    /// not copied: PostgreSQL numbers the rows as they are appended, in SQLite's order).
    static let tables: [(name: String, order: String, columns: [(String, Kind)])] = [
        ("kv", "script, key", [("script", .text), ("key", .text), ("value", .bytes), ("updated_at", .double)]),
        ("outbox", "site, identifier", [
            ("site", .text), ("identifier", .text), ("collection", .text), ("body", .bytes), ("source", .text),
            ("created", .double), ("state", .text), ("attempts", .integer), ("next_attempt", .double), ("last_error", .text),
            ("last_status", .integer), ("sent_at", .double), ("deduplicated", .boolean),
        ]),
        ("sync_cursor", "site, collection", [("site", .text), ("collection", .text), ("cursor", .text), ("updated_at", .double)]),
        ("sync_mirror", "site, collection, identifier", [
            ("site", .text), ("collection", .text), ("identifier", .text), ("date", .integer), ("srv_modified", .integer),
            ("is_valid", .boolean), ("raw", .bytes),
        ]),
        ("audit", "seq", [
            ("id", .text), ("ticket", .text), ("time", .double), ("site", .text), ("source", .text), ("verdict", .text),
            ("reason_code", .text), ("reason", .text), ("phase", .text), ("detail", .text), ("command", .text),
        ]),
        ("alert_state", "id", [
            ("id", .text), ("script", .text), ("title", .text), ("severity", .text), ("state", .text), ("since", .double),
            ("episode", .integer), ("data", .text), ("updated_at", .double),
        ]),
        ("alert_acks", "id, episode", [("id", .text), ("episode", .integer), ("acked_by", .text), ("acked_at", .double)]),
        ("alert_snoozes", "id, episode", [
            ("id", .text), ("episode", .integer), ("snoozed_by", .text), ("snoozed_at", .double), ("snoozed_until", .double),
        ]),
        ("notify_outbox", "id", [
            ("id", .text), ("channel", .text), ("message", .text), ("source", .text), ("created", .double), ("state", .text),
            ("attempts", .integer), ("next_attempt", .double), ("claimed_at", .double), ("last_error", .text),
            ("last_status", .integer), ("sent_at", .double),
        ]),
        ("remote_budget_keys", "key, ticket", [("key", .text), ("ticket", .text), ("time", .double)]),
        ("remote_otp_codes", "pump, counter", [("pump", .text), ("counter", .integer), ("code", .text), ("time", .double)]),
        // Repeat counts follow their audit row by its id (the rows' `seq` is renumbered).
        ("audit_repeats", "seq", [("id", .text), ("count", .integer), ("last_time", .double)]),
        ("profile_catalogue", "service, name", [("service", .text), ("name", .text), ("body", .text), ("updated_at", .double)]),
    ]

    /// Tables read and written through their own statements (`audit_repeats` joins `audit`).
    static let special: [String: (select: String, insert: String)] = [
        "audit_repeats": (
            "SELECT audit.id, audit_repeats.count, audit_repeats.last_time FROM audit_repeats JOIN audit USING (seq) "
                + "ORDER BY audit_repeats.seq",
            "INSERT INTO audit_repeats (seq, count, last_time) SELECT seq, $2, $3 FROM audit WHERE id = $1"),
    ]

    /// Copies every table of `source` into `target` (which must hold no state) and verifies the
    /// counts; returns them.
    public static func copy(from source: StateStore, to target: PostgresStateStore) async throws -> [TableCount] {
        try await target.prepared()
        var snapshot: [(table: String, columns: [(String, Kind)], rows: [[DatabaseValue]])] = []
        for table in tables {
            let names = table.columns.map(\.0).joined(separator: ", ")
            let rows = try await source.access { db in
                try Row.fetchAll(db, sql: special[table.name]?.select ?? "SELECT \(names) FROM \(table.name) ORDER BY \(table.order)")
                    .map { row in table.columns.indices.map { row[$0] as DatabaseValue } }
            }
            snapshot.append((table.name, table.columns, rows))
        }
        let copied = snapshot
        return try await target.transaction(timeout: .seconds(3600)) { connection in
            for table in copied {
                let existing = try await target.count(table.table, on: connection)
                if existing > 0 { throw CopyError.targetNotEmpty(table: table.table, rows: existing) }
            }
            var counts: [TableCount] = []
            for table in copied {
                let names = table.columns.map(\.0).joined(separator: ", ")
                let marks = table.columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
                for row in table.rows {
                    var binds = PostgresBindings(capacity: row.count)
                    for (value, (_, kind)) in zip(row, table.columns) { try bind(value, as: kind, into: &binds) }
                    let insert = special[table.table]?.insert ?? "INSERT INTO \(table.table) (\(names)) VALUES (\(marks))"
                    try await target.execute(PostgresQuery(unsafeSQL: insert, binds: binds), on: connection)
                }
                counts.append(TableCount(table: table.table, source: table.rows.count,
                                         target: try await target.count(table.table, on: connection)))
            }
            guard counts.allSatisfy({ $0.source == $0.target }) else { throw CopyError.countsDiffer(counts) }
            return counts
        }
    }

    private static func bind(_ value: DatabaseValue, as kind: Kind, into binds: inout PostgresBindings) throws {
        switch (value.storage, kind) {
        case (.null, _): binds.appendNull()
        case (.string(let text), .bytes): try binds.append(Data(text.utf8))
        case (.blob(let data), .bytes): try binds.append(data)
        case (.string(let text), _): binds.append(text)
        case (.blob(let data), .text): binds.append(String(decoding: data, as: UTF8.self))
        case (.int64(let n), .boolean): binds.append(n != 0)
        case (.int64(let n), .double): binds.append(Double(n))
        case (.int64(let n), _): binds.append(n)
        case (.double(let d), .integer): binds.append(Int64(d))
        case (.double(let d), _): binds.append(d)
        case (.blob(let data), _): try binds.append(data)
        }
    }
}

extension PostgresStateStore {
    /// The rows of one table.
    func count(_ table: String, on connection: PostgresConnection) async throws -> Int {
        Int(try await rows(PostgresQuery(unsafeSQL: "SELECT COUNT(*) AS n FROM \(table)"), on: connection).first?["n"]
            .decode(Int64.self) ?? 0)
    }
}
