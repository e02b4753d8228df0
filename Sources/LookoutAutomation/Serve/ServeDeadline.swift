/// Waiting with a deadline that holds whatever the awaited work does: a script whose executor is
/// busy (thousands of tasks) answers a hop late, and a drain must still end on time.
enum ServeDeadline {
    /// The value of `operation`, or nil when `deadline` came first (the operation then goes on
    /// unobserved).
    static func first<T: Sendable>(at deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let first = FirstResult<T?>()
        let work = Task { first.resolve(await operation()) }
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            first.resolve(nil)
        }
        let result = await first.value
        timer.cancel()
        _ = work
        return result
    }
}
