import Foundation

/// Bytes the host holds for one script outside its Lua state: request bodies waiting to be sent
/// and response bodies being read or waiting to be handed over (`http`). They count against a
/// budget as large as the script's memory limit (``LuaOptions/memoryLimit``; none when that is
/// 0), so a script cannot make the host buffer more for it than it may allocate itself, however
/// many requests it has in flight. Any thread may reserve and release.
public final class LuaHostBytes: Sendable {
    /// The most bytes held at once; 0 = no limit.
    public let limit: Int
    private let state = HostBytesState()

    /// A budget of `limit` bytes (0 = no limit).
    public init(limit: Int) { self.limit = max(0, limit) }

    /// Bytes held now.
    public var held: Int { state.withLock { $0 } }

    /// Takes `bytes` from the budget; a `Hold` that gives them back when it is freed, or nil
    /// (nothing taken) when they do not fit.
    public func reserve(_ bytes: Int) -> Hold? {
        guard bytes > 0 else { return Hold(budget: self, bytes: 0) }
        let taken = state.withLock { held -> Bool in
            guard limit == 0 || held + bytes <= limit else { return false }
            held += bytes
            return true
        }
        return taken ? Hold(budget: self, bytes: bytes) : nil
    }

    fileprivate func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        state.withLock { $0 -= bytes }
    }

    /// Bytes taken from a budget, given back when the hold is freed (or sooner with
    /// ``releaseAll()``). Holds grow as more of one body arrives.
    public final class Hold: Sendable {
        private let budget: LuaHostBytes
        private let bytes: HostBytesState

        fileprivate init(budget: LuaHostBytes, bytes: Int) {
            self.budget = budget
            self.bytes = HostBytesState(bytes)
        }

        /// Bytes held.
        public var count: Int { bytes.withLock { $0 } }

        /// Takes `more` bytes into this hold; false (nothing taken) when they do not fit.
        public func grow(by more: Int) -> Bool {
            guard more > 0 else { return true }
            guard let extra = budget.reserve(more) else { return false }
            let moved = extra.bytes.withLock { n -> Int in defer { n = 0 }; return n }
            bytes.withLock { $0 += moved }
            return true
        }

        /// Gives every byte back now.
        public func releaseAll() {
            budget.release(bytes.withLock { n -> Int in defer { n = 0 }; return n })
        }

        deinit { releaseAll() }
    }
}

/// A byte count behind a lock.
private final class HostBytesState: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Int

    init(_ value: Int = 0) { self.value = value }

    func withLock<T>(_ body: (inout Int) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
