import Foundation
import GRDB
import NightscoutKit

/// What the remote-command ledger keeps besides the audit log: the budget keys each reserved
/// command was recorded under (`remote_budget_keys`: the other spellings of its site, the Loop
/// device its site pushes to), and the one-time codes sent to each pump (`remote_otp_codes`).
/// Both are written in `BEGIN IMMEDIATE` transactions, so every process using the database
/// shares them; neither is part of the audit (old rows may be deleted).
extension StateStore {
    /// The two tables.
    static let remoteKeyMigrations: [Migration] = [
        ("v6-remote-budget-keys", { db in
            try db.execute(sql: """
                CREATE TABLE remote_budget_keys (
                    key TEXT NOT NULL,
                    ticket TEXT NOT NULL,
                    time REAL NOT NULL,
                    PRIMARY KEY (key, ticket)
                ) WITHOUT ROWID;
                CREATE INDEX remote_budget_keys_time ON remote_budget_keys (key, time);
                CREATE TABLE remote_otp_codes (
                    pump TEXT NOT NULL,
                    counter INTEGER NOT NULL,
                    code TEXT NOT NULL,
                    time REAL NOT NULL,
                    PRIMARY KEY (pump, counter)
                ) WITHOUT ROWID;
                """)
        }),
    ]

    /// How much earlier than the window a ticket's keys are looked up: a command's records may
    /// be newer than its reservation (its send report), which is the time the keys carry.
    static let budgetKeySlack: TimeInterval = 86_400

    /// Records a reserved ticket under `keys`.
    static func recordBudgetKeys(ticket: UUID, keys: [String], time: Date, in db: Database) throws {
        for key in Set(keys) {
            try db.execute(sql: "INSERT OR IGNORE INTO remote_budget_keys (key, ticket, time) VALUES (?, ?, ?)",
                           arguments: [key, ticket.uuidString, time.timeIntervalSince1970])
        }
    }

    /// Claims `code` (time step `counter`) for `pumps` in one `BEGIN IMMEDIATE` transaction; see
    /// `RemoteCommandLedger.claimOneTimeCode`. Codes older than `RemoteCommandOTP.reuseWindow`
    /// are forgotten in the same transaction.
    public func claimOneTimeCode(_ code: String, counter: UInt64, pumps: [String], now: Date) async throws -> Bool {
        let pumps = Array(Set(pumps)).sorted()
        guard !pumps.isEmpty else { return true }
        let marks = Array(repeating: "?", count: pumps.count).joined(separator: ", ")
        do {
            return try await database.writeWithoutTransaction { db in
                var claimed = false
                try db.inTransaction(.immediate) {
                    try db.execute(sql: "DELETE FROM remote_otp_codes WHERE time < ?",
                                   arguments: [now.timeIntervalSince1970 - RemoteCommandOTP.reuseWindow])
                    let used = try Int.fetchOne(db, sql: """
                        SELECT COUNT(*) FROM remote_otp_codes WHERE pump IN (\(marks)) AND (counter = ? OR code = ?)
                        """, arguments: StatementArguments(pumps) + StatementArguments([Int64(bitPattern: counter)])
                            + StatementArguments([code])) ?? 0
                    guard used == 0 else { return .commit }
                    for pump in pumps {
                        try db.execute(sql: "INSERT INTO remote_otp_codes (pump, counter, code, time) VALUES (?, ?, ?, ?)",
                                       arguments: [pump, Int64(bitPattern: counter), code, now.timeIntervalSince1970])
                    }
                    claimed = true
                    return .commit
                }
                return claimed
            }
        } catch {
            throw StateStoreError(file: path ?? ":memory:", underlying: error)
        }
    }
}
