import Foundation
import LookoutConfig
import PostgresNIO

/// Room for the guard and the audit log on PostgreSQL: `[state] max_size` is checked against
/// the database's size (`pg_database_size`), read at most every `sizeRefresh` seconds in the
/// background; `[state] min_free` is about this machine's disk and does not apply (the server
/// keeps its own disk). Until the size has been read once, scripts' writes are refused
/// (retryable) when `max_size` is set: the check never passes unknown.
extension PostgresStateStore {
    /// How old a size reading may be before a write starts a new one.
    static let sizeRefresh: TimeInterval = 10

    /// Throws when a script's write would take the database past `[state] max_size`.
    public func requireRoom() throws(StateStoreError) {
        guard StateStore.room.maxSizeBytes != nil else { return }
        let reading = sizeReading.withLock { $0 }
        if reading.map({ Date().timeIntervalSince($0.at) > Self.sizeRefresh }) ?? true { refreshSize() }
        guard let reading else {
            var error = StateStoreError(file: location, message: "the size of the state database is not known yet: "
                                        + "scripts' writes wait for it (state.max_size in config.toml)", retryable: true)
            error.code = "quota"
            throw error
        }
        if let problem = StateStore.room.refusal(for: StateStore.Usage(size: reading.size, free: nil)) {
            var error = StateStoreError(file: location, message: problem.message, retryable: true)
            error.code = problem.code
            throw error
        }
    }

    /// The database's size now (free space unknown: it is the server's disk).
    public func usage() async throws(StateStoreError) -> StateStore.Usage {
        let size = try await withConnection(prepare: false) { [self] connection in
            try await self.rows("SELECT pg_database_size(current_database())::bigint AS size", on: connection)
                .first.map { try $0["size"].decode(Int.self) } ?? 0
        }
        sizeReading.withLock { $0 = (size, Date()) }
        return StateStore.Usage(size: size, free: nil)
    }

    /// Reads the size in the background (one reading at a time is enough; a failure keeps the old one).
    func refreshSize() {
        Task { [self] in _ = try? await self.usage() }
    }
}
