import Foundation
import LuaShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A serial executor that runs every job on one dedicated OS thread, and owns the timer heap of
/// the Lua state that lives on that thread.
///
/// Lua code can run for a long time between waits; on the cooperative pool (two threads on a
/// small machine) that would starve every other task, so each Lua state gets a thread of its own.
/// Timers are kept here rather than as sleeping Swift tasks so that ten thousand of them cost a
/// heap entry each, and wake-ups are as precise as a condition variable.
public final class LuaThreadExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked Sendable: every mutable field below is guarded by `mutex`; the thread itself only
    // touches them with the mutex held.

    // Allocated, never stored inline: a pthread mutex or condition must not move, and `&property`
    // on a Swift stored property may pass a temporary copy.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
    private let condition: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)
    private var jobs: [UnownedJob] = []
    private var jobHead = 0
    private var timers = TimerHeap()
    private var stopping = false
    private var threadID: pthread_t?
    private var onTimers: (@Sendable ([UInt64]) -> Void)?
    /// Virtual time (`LuaClock.virtual`): timer deadlines are on it, and it jumps when idle.
    private let virtual: LuaVirtualTime?
    /// Host work under way that may still make Lua work (virtual time does not jump meanwhile).
    private var holds = 0
    /// In virtual mode, the one timer that stays on real time (the run's wall-clock limit).
    private var realTimer: (id: UInt64, deadline: Int64)?
    /// `shim_now_ns()` when the running job or timer handler started; 0 while the thread waits.
    private var busySince: Int64 = 0
    /// The thread's kernel id (Linux; -1 elsewhere), written once before `init` returns.
    private var kernelThreadID: Int64 = -1

    /// Starts the executor's thread.
    /// - Parameters:
    ///   - name: the thread name shown by debuggers and `top -H`.
    ///   - virtualTime: run timers on this virtual time instead of the monotonic clock.
    public init(name: String, virtualTime: LuaVirtualTime? = nil) {
        virtual = virtualTime
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            self.threadID = pthread_self()
            self.kernelThreadID = shim_thread_id()
            started.signal()
            self.loop()
        }
        thread.name = name
        thread.stackSize = 16 << 20  // deep Lua recursion and C parsers need room
        thread.start()
        started.wait()  // threadID is written once, before anyone can read it
    }

    deinit {
        // The thread holds `self` until its loop ends, so nothing uses the mutex any more.
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Sets the function called on the executor's thread with the identifiers of due timers.
    public func setTimerHandler(_ handler: @escaping @Sendable ([UInt64]) -> Void) {
        pthread_mutex_lock(mutex)
        onTimers = handler
        pthread_mutex_unlock(mutex)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(unowned)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless called on the executor's thread (Swift calls this for `assumeIsolated`).
    public func checkIsolated() {
        precondition(isCurrent, "Lua state touched off its executor thread")
    }

    /// Whether the caller runs on this executor's thread.
    public var isCurrent: Bool {
        guard let threadID else { return false }
        return pthread_equal(threadID, pthread_self()) != 0
    }

    /// Whether timers run on virtual time.
    public var isVirtual: Bool { virtual != nil }

    /// The time timer deadlines are measured on, in nanoseconds: `shim_now_ns()`, or the virtual
    /// nanoseconds elapsed.
    public var now: Int64 {
        if let virtual { return virtual.elapsed }
        return shim_now_ns()
    }

    /// Virtual time: host work started that will post Lua work later (a `call.wait`, a
    /// deferred drain); the clock does not jump until it is released. A no-op otherwise.
    public func hold() {
        guard virtual != nil else { return }
        pthread_mutex_lock(mutex)
        holds += 1
        pthread_mutex_unlock(mutex)
    }

    /// Ends what `hold()` began.
    public func release() {
        guard virtual != nil else { return }
        pthread_mutex_lock(mutex)
        holds -= 1
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Arms a timer on real monotonic time (`shim_now_ns()`), even under virtual time: the
    /// run's wall-clock limit. Under virtual time there is one such timer at most.
    public func schedule(realTimer id: UInt64, at deadline: Int64) {
        guard virtual != nil else { return schedule(timer: id, at: deadline) }
        pthread_mutex_lock(mutex)
        realTimer = (id, deadline)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Arms a timer: the handler receives `id` once the clock (`now`) passes `deadline`.
    /// - Parameter deadline: `now` time in nanoseconds.
    public func schedule(timer id: UInt64, at deadline: Int64) {
        pthread_mutex_lock(mutex)
        timers.insert(deadline: deadline, id: id)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Disarms a timer; a no-op when it already fired.
    public func cancel(timer id: UInt64) {
        pthread_mutex_lock(mutex)
        timers.remove(id: id)
        pthread_mutex_unlock(mutex)
    }

    /// Number of armed timers.
    public var armedTimers: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return timers.count
    }

    /// Since when (`shim_now_ns()`) the thread has been running its current job or timer handler;
    /// nil while it waits for work. Any thread may ask (the stall watchdog does).
    public var busy: Int64? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return busySince == 0 ? nil : busySince
    }

    /// Lowers the thread's scheduling priority as far as it goes (Linux): for the thread of a state
    /// that is stuck and abandoned, which keeps running but should only get idle CPU time.
    public func deprioritize() { _ = shim_deprioritize(kernelThreadID) }

    /// Runs `body` with the mutex released, marking the thread busy meanwhile.
    private func unlocked(_ body: () -> Void) {
        busySince = shim_now_ns()
        pthread_mutex_unlock(mutex)
        body()
        pthread_mutex_lock(mutex)
        busySince = 0
    }

    /// Lets the thread finish the jobs it has and exit.
    public func shutdown() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    private func loop() {
        pthread_mutex_lock(mutex)
        while true {
            if jobHead < jobs.count {
                let job = jobs[jobHead]
                jobHead += 1
                if jobHead > 1024, jobHead * 2 > jobs.count {
                    jobs.removeFirst(jobHead)
                    jobHead = 0
                }
                unlocked { job.runSynchronously(on: asUnownedSerialExecutor()) }
                continue
            }
            if jobHead > 0 {
                jobs.removeAll(keepingCapacity: true)
                jobHead = 0
            }
            if let virtual {
                if runVirtualStep(virtual) { continue }
                break
            }
            let now = shim_now_ns()
            let due = timers.popDue(now: now)
            if !due.isEmpty, let handler = onTimers {
                unlocked { handler(due) }
                continue
            }
            if stopping { break }
            if let next = timers.nextDeadline {
                var ts = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &ts)
            } else {
                pthread_cond_wait(condition, mutex)
            }
        }
        pthread_mutex_unlock(mutex)
    }

    /// One turn of the loop under virtual time, with the mutex held and no job queued: fire what
    /// is due; else, when no host work is under way, jump to the next deadline; else sleep until
    /// something is posted. Returns false when the thread should exit.
    private func runVirtualStep(_ virtual: LuaVirtualTime) -> Bool {
        if let real = realTimer, shim_now_ns() >= real.deadline, let handler = onTimers {
            realTimer = nil
            unlocked { handler([real.id]) }
            return true
        }
        let due = timers.popDue(now: virtual.elapsed)
        if !due.isEmpty, let handler = onTimers {
            unlocked { handler(due) }
            return true
        }
        if stopping { return false }
        if holds == 0, let next = timers.nextDeadline {
            unlocked { virtual.advance(to: next) }  // runs the advance handler on this thread
            return true
        }
        if let real = realTimer {
            var ts = timespec(tv_sec: Int(real.deadline / 1_000_000_000), tv_nsec: Int(real.deadline % 1_000_000_000))
            pthread_cond_timedwait(condition, mutex, &ts)
        } else {
            pthread_cond_wait(condition, mutex)
        }
        return true
    }
}

/// A binary min-heap of (deadline, id) with lazy removal.
struct TimerHeap {
    private var heap: [(deadline: Int64, id: UInt64)] = []
    private var live: Set<UInt64> = []

    var count: Int { live.count }

    var nextDeadline: Int64? {
        mutating get {
            dropDead()
            return heap.first?.deadline
        }
    }

    mutating func insert(deadline: Int64, id: UInt64) {
        live.insert(id)
        heap.append((deadline, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].deadline <= heap[child].deadline { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    mutating func remove(id: UInt64) { live.remove(id) }

    mutating func popDue(now: Int64) -> [UInt64] {
        var due: [UInt64] = []
        while let top = heap.first, top.deadline <= now {
            popTop()
            if live.remove(top.id) != nil { due.append(top.id) }
        }
        return due
    }

    private mutating func dropDead() {
        while let top = heap.first, !live.contains(top.id) { popTop() }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
