import Foundation
import LookoutConfig
import PostgresNIO

/// The scripts' key/value store (`kv`): values as bytes, exactly as `json.encode` wrote them.
/// Quota checks run in the write's transaction after locking the script's rows, so two writers
/// (in any process or machine) cannot both slip under the quota.
extension PostgresStateStore: ScriptValueStore {
    /// The JSON text stored under `key` for `script`, or nil.
    public func value(script: String, key: String) async throws(StateStoreError) -> [UInt8]? {
        try await withConnection { [self] connection in
            try await self.rows("SELECT value FROM kv WHERE script = \(script) AND key = \(key)", on: connection)
                .first.map { [UInt8](try $0["value"].decode(Data.self)) }
        }
    }

    /// Stores JSON text under `key` for `script`; nil deletes the key (quota as in `StateStore`).
    public func setValue(_ json: [UInt8]?, script: String, key: String, quota: StoreQuota? = nil) async throws(StateStoreError) {
        try await transaction { [self] connection in
            try await self.put(json, script: script, key: key, quota: quota, on: connection)
        }
    }

    /// Replaces the value only if it is still `expected`, in one transaction (the row is locked
    /// first, so a concurrent swap waits and then sees the new value).
    public func replaceValue(
        script: String, key: String, expected: [UInt8]?, with json: [UInt8]?, quota: StoreQuota? = nil
    ) async throws(StateStoreError) -> Bool {
        try await transaction { [self] connection in
            try await self.lockScript(script, on: connection)
            let current = try await self.rows("SELECT value FROM kv WHERE script = \(script) AND key = \(key)", on: connection)
                .first.map { [UInt8](try $0["value"].decode(Data.self)) }
            guard current == expected else { return false }
            try await self.put(json, script: script, key: key, quota: quota, on: connection)
            return true
        }
    }

    /// The keys of `script` starting with `prefix`, in byte order.
    public func keys(script: String, prefix: String = "") async throws(StateStoreError) -> [String] {
        try await withConnection { [self] connection in
            try await self.rows("""
                SELECT key FROM kv WHERE script = \(script) AND starts_with(key, \(prefix)) ORDER BY key
                """, on: connection).map { try $0["key"].decode(String.self) }
        }
    }

    /// Every key of `script` with its JSON text, in key order.
    public func entries(script: String) async throws(StateStoreError) -> [(key: String, value: [UInt8])] {
        let rows = try await withConnection { [self] connection in
            try await self.rows("SELECT key, value FROM kv WHERE script = \(script) ORDER BY key", on: connection)
                .map { row in KeyValue(key: try row["key"].decode(String.self), value: [UInt8](try row["value"].decode(Data.self))) }
        }
        return rows.map { (key: $0.key, value: $0.value) }
    }

    private struct KeyValue: Sendable { var key: String; var value: [UInt8] }

    /// Serialises writers of one script (quota sums and compare-and-swap): a transaction-level
    /// advisory lock on the script's name.
    private func lockScript(_ script: String, on connection: PostgresConnection) async throws {
        try await execute("SELECT pg_advisory_xact_lock(hashtextextended(\("lookout.kv:" + script), 0))", on: connection)
    }

    private func put(_ json: [UInt8]?, script: String, key: String, quota: StoreQuota?, on connection: PostgresConnection) async throws {
        guard let json else {
            try await execute("DELETE FROM kv WHERE script = \(script) AND key = \(key)", on: connection)
            return
        }
        if let quota {
            try await lockScript(script, on: connection)
            let sums = try await rows("""
                SELECT COALESCE(SUM(octet_length(key) + octet_length(value)) FILTER (WHERE key <> \(key)), 0)::bigint AS others,
                       COALESCE(SUM(octet_length(key) + octet_length(value)) FILTER (WHERE key = \(key)), 0)::bigint AS old
                FROM kv WHERE script = \(script)
                """, on: connection)
            let others = Int(try sums.first?["others"].decode(Int64.self) ?? 0)
            let old = Int(try sums.first?["old"].decode(Int64.self) ?? 0)
            let new = key.utf8.count + json.count
            if others + new > quota.bytes, new > old {
                throw StoreQuotaExceeded(script: script, key: key, wouldUse: others + new, quota: quota)
            }
        }
        try await execute("""
            INSERT INTO kv (script, key, value, updated_at) VALUES (\(script), \(key), \(Data(json)), \(Date().timeIntervalSince1970))
            ON CONFLICT (script, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
            """, on: connection)
    }
}
