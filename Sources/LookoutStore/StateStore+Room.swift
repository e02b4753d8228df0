import Foundation
import LookoutConfig
import LookoutWire
import Lua

/// Room in the state database for what must not fail: the guard's reservations and the audit
/// log. Scripts' own writes (`store`, outbox uploads, notifications) call `requireRoom()` first
/// and are refused, with a clear `nil, err`, once the database has reached `[state] max_size`
/// or the disk's free space is below `[state] min_free`; the guard and the audit log never ask,
/// so they keep the space that is left.
extension StateStore {
    private static let roomLimits = Locked<HostConfig.StateRoom>(.defaults)

    /// The process's room limits (the host sets them from `[state]` when it starts scripts).
    public static var room: HostConfig.StateRoom {
        get { roomLimits.withLock { $0 } }
        set { roomLimits.withLock { $0 = newValue } }
    }

    /// How big the database is and how much the disk has free.
    public struct Usage: Sendable, Equatable {
        /// Bytes of the database file and its write-ahead log (0 in memory).
        public var size: Int
        /// Bytes free for this user on the database's file system (nil in memory or unknown).
        public var free: Int?
    }

    /// The database's size and the free space of its file system now.
    public func usage() -> Usage {
        guard let path else { return Usage(size: 0, free: nil) }
        var size = 0
        for file in [path, path + "-wal"] {
            var info = stat()
            if stat(file, &info) == 0 { size += Int(info.st_size) }
        }
        var fs = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        let free = statvfs(directory.isEmpty ? "." : directory, &fs) == 0 ? Int(fs.f_bavail) * Int(fs.f_frsize) : nil
        return Usage(size: size, free: free)
    }

    /// Throws (`err.code` `quota` or `disk_full`, retryable) when a script's write would eat into
    /// the room kept for the guard and the audit log.
    public func requireRoom() throws(StateStoreError) {
        if let problem = Self.room.refusal(for: usage()) {
            var error = StateStoreError(file: path ?? ":memory:", message: problem.message, retryable: true)
            error.code = problem.code
            throw error
        }
    }
}

extension HostConfig.StateRoom {
    /// Why a script's write is refused at `usage` (its `err.code` and message), or nil.
    public func refusal(for usage: StateStore.Usage) -> (code: String, message: String)? {
        let kept = "scripts' writes are refused until there is room; the remote-command guard and its audit log keep working"
        if let max = maxSizeBytes, usage.size >= max {
            return ("quota", "the state database holds \(Quantities.formatSize(usage.size)), at its limit of "
                        + "\(Quantities.formatSize(max)) (state.max_size in config.toml): \(kept)")
        }
        if let free = usage.free, free < minFreeBytes {
            return ("disk_full", "the disk has \(Quantities.formatSize(free)) free, less than the "
                        + "\(Quantities.formatSize(minFreeBytes)) kept free (state.min_free in config.toml): \(kept)")
        }
        return nil
    }
}
