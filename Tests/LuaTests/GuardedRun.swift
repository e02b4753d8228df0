import Foundation
import Lua
import XCTest

/// Runs `source` on a started `runtime` and closes it; fails the test instead of hanging when the
/// run does not end within `guardSeconds` (then the state is left behind, stuck).
func runGuarded(
    _ runtime: LuaRuntime, _ source: String, chunkName: String, guardSeconds: Double,
    file: StaticString = #filePath, line: UInt = #line
) async throws -> LuaRunOutcome {
    let result = FirstOf<LuaRunOutcome?>()
    Task {
        let outcome = await runtime.run(source: Array(source.utf8), chunkName: chunkName)
        await runtime.close()
        result.resolve(outcome)
    }
    Task {
        try? await Task.sleep(for: .seconds(guardSeconds))
        result.resolve(nil)
    }
    guard let outcome = await result.value else {
        XCTFail("the script did not stop (guard of \(guardSeconds) s)", file: file, line: line)
        throw CancellationError()
    }
    return outcome
}

/// The first value delivered (a run, or the test's guard).
final class FirstOf<T: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every field is touched with `lock` held.
    private let lock = NSLock()
    private var delivered: T?
    private var done = false
    private var waiter: CheckedContinuation<T, Never>?

    func resolve(_ value: T) {
        let waiter: CheckedContinuation<T, Never>? = lock.withLock {
            guard !done else { return nil }
            done = true
            delivered = value
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: T {
        get async {
            await withCheckedContinuation { continuation in
                let ready: (done: Bool, value: T?) = lock.withLock {
                    if done { return (true, delivered) }
                    waiter = continuation
                    return (false, nil)
                }
                if ready.done, let value = ready.value { continuation.resume(returning: value) }
            }
        }
    }
}
