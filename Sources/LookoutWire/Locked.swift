import NIOConcurrencyHelpers

/// A value guarded by a lock, shareable between threads: the one lock type of the Kits, the
/// simulators and the host (`Lua` and `LuaShim`, below this module, keep their own).
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched inside `lock` (NIOLock; Synchronization's
    // Mutex needs macOS 15, above the package's platform).
    private let lock = NIOLock()
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

}
