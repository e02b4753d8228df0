/// The requests a state has in flight (`LuaCall.request`: the network calls of `http`,
/// `nightscout`, `signalk`, `feedback`, `garmin`, `notify`): at most
/// ``LuaOptions/requestsInFlight`` run at once; the next ones wait in a queue (a parked task, no
/// Swift work started) and start in order as running ones end; when the queue is full too, the
/// call returns `nil, err` (`err.code == "limit"`) at once. So one script cannot make the host hold
/// more than a bounded number of requests, connections and Swift tasks on its behalf, whatever it
/// spawns.
struct LuaRequestGate {
    /// Requests running now (their Swift work started).
    var running = 0
    /// Waits parked in `queue` (entries whose wait ended since are skipped when reached).
    var queued = 0
    /// Waits for a free slot, oldest first from `head`.
    var queue: [PendingWait] = []
    /// Index of the oldest entry of `queue` not yet taken.
    var head = 0
    /// While true (every task is being cancelled) a freed slot starts nothing.
    var paused = false

    /// How many requests may wait for a slot: eight times the limit.
    static func queueLimit(for limit: Int) -> Int { limit * 8 }
}

/// Where a counted wait stands in the gate.
enum RequestSlot {
    /// Not a request, or it ended.
    case none
    /// Waiting in the queue for a slot.
    case queued
    /// Holds a slot: its work runs.
    case running
}

extension LuaEngine {
    /// The most requests the state runs at once (``LuaOptions/requestsInFlight``, at least 1).
    public var requestLimit: Int { max(1, options.requestsInFlight) }

    /// Requests running and waiting now, for diagnostics and tests.
    public var requestsInFlight: (running: Int, queued: Int) { (requestGate.running, requestGate.queued) }

    /// Whether one more request can run or queue; otherwise the `nil, err` to return.
    func requestAdmission(_ what: String) -> LuaErrorInfo? {
        let limit = requestLimit
        guard requestGate.running >= limit, requestGate.queued >= LuaRequestGate.queueLimit(for: limit) else { return nil }
        return LuaErrorInfo(
            code: "limit",
            message: "\(what): too many requests in flight (\(limit) running and \(requestGate.queued) waiting; "
                + "see --requests-in-flight or [limits] requests_in_flight)",
            retryable: true)
    }

    /// Starts a counted wait's work now, or queues it until a slot is free.
    func startRequest(_ wait: PendingWait) {
        if requestGate.running < requestLimit, !requestGate.paused {
            requestGate.running += 1
            wait.slot = .running
            wait.cancel = wait.start(self, wait.id)
        } else {
            wait.slot = .queued
            requestGate.queued += 1
            requestGate.queue.append(wait)
        }
    }

    /// A wait ended (completed or cancelled): frees its slot or its place in the queue, and starts
    /// the oldest queued request when a slot came free.
    func releaseRequestSlot(of wait: PendingWait) {
        switch wait.slot {
        case .none: return
        case .queued: requestGate.queued -= 1
        case .running: requestGate.running -= 1
        }
        wait.slot = .none
        startQueuedRequests()
    }

    /// Starts queued requests while slots are free.
    func startQueuedRequests() {
        while !requestGate.paused, !closed, requestGate.running < requestLimit, requestGate.head < requestGate.queue.count {
            let next = requestGate.queue[requestGate.head]
            requestGate.head += 1
            guard next.slot == .queued, waits[next.id] === next else { continue }
            requestGate.queued -= 1
            requestGate.running += 1
            next.slot = .running
            next.cancel = next.start(self, next.id)
        }
        if requestGate.head >= requestGate.queue.count {
            requestGate.queue.removeAll(keepingCapacity: requestGate.queue.count < 4096)
            requestGate.head = 0
        } else if requestGate.head > 1024, requestGate.head * 2 > requestGate.queue.count {
            requestGate.queue.removeFirst(requestGate.head)
            requestGate.head = 0
        }
    }
}
