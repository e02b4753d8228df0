import Foundation
import LookoutWire
import LookoutConfig
import LookoutModules
import LookoutStore

/// What is remembered of a job between runs of the host: its last run and how it ended, so that a
/// restarted `serve` knows whether a run was missed.
struct ScheduleRecord: Sendable, Codable, Equatable {
    /// When the last run started (epoch ms).
    var lastRun: Int64?
    /// Whether it ended without error (nil while running or unknown).
    var lastOK: Bool?
    /// Its error, first line.
    var lastError: String?

    enum CodingKeys: String, CodingKey {
        case lastRun = "last_run", lastOK = "last_ok", lastError = "last_error"
    }
}

/// Where job records live: the state database's key/value table under the reserved script name
/// `(schedule)`, key `<script>/<job name>`; or memory only (`lookout test`, no state database).
/// Writes are queued and written in order by one writer, newest record per key winning.
final class ScheduleRecords: Sendable {
    /// The key/value "script" that holds the records.
    static let namespace = "(schedule)"
    private let store: (any StateBackend)?
    private let memory = Locked<[String: ScheduleRecord]>([:])
    private let pending = Locked<(records: [String: ScheduleRecord], writing: Bool)>(([:], false))

    /// Records in `store`, or in memory when nil.
    init(store: (any StateBackend)?) { self.store = store }

    /// The record of a job, if one was saved.
    func load(key: String) async -> ScheduleRecord? {
        if let record = memory.withLock({ $0[key] }) { return record }
        guard let store, let bytes = try? await store.value(script: ScheduleRecords.namespace, key: key) else { return nil }
        return try? JSONDecoder().decode(ScheduleRecord.self, from: Data(bytes))
    }

    /// Saves a record (asynchronously; a later save of the same key wins).
    func save(_ record: ScheduleRecord, key: String) {
        memory.withLock { $0[key] = record }
        guard let store else { return }
        let start = pending.withLock { state -> Bool in
            state.records[key] = record
            if state.writing { return false }
            state.writing = true
            return true
        }
        guard start else { return }
        Task { [pending] in
            while true {
                let batch = pending.withLock { state -> [String: ScheduleRecord] in
                    let batch = state.records
                    state.records = [:]
                    if batch.isEmpty { state.writing = false }
                    return batch
                }
                if batch.isEmpty { return }
                for (key, record) in batch {
                    guard let data = try? JSONEncoder().encode(record) else { continue }
                    try? await store.setValue(Array(data), script: ScheduleRecords.namespace, key: key, quota: nil)
                }
            }
        }
    }
}
