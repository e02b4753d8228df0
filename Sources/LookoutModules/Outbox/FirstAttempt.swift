import Foundation

/// How uploads and notifications answer a script quickly: the first send is awaited for a short
/// window; if it takes longer, the script gets the queued item and the send goes on.
public enum FirstAttempt {
    /// The result of `attempt` if it ends within `window` seconds, else nil (it keeps running).
    public static func result<T: Sendable>(within window: TimeInterval, _ attempt: @escaping @Sendable () async -> T) async -> T? {
        let task = Task { await attempt() }
        return await withTaskGroup(of: T?.self) { group in
            group.addTask { await task.value }
            group.addTask {
                try? await Task.sleep(for: .seconds(window))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
