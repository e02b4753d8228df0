import Foundation

/// A value guarded by a lock, shareable between threads.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched inside `lock` (NSLock; Mutex needs macOS 15).
    private let lock = NSLock()
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
