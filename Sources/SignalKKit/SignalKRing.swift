/// A bounded first-in first-out buffer that drops the **oldest** element when full and counts
/// what it dropped: the buffering policy of every Signal K consumer (a slow consumer always sees
/// the newest data, and its memory stays bounded).
public struct SignalKRing<Element> {
    private var slots: [Element?]
    private var head = 0
    /// Elements buffered.
    public private(set) var count = 0
    /// Elements dropped so far because the ring was full.
    public private(set) var dropped = 0

    /// Most elements buffered.
    public var capacity: Int { slots.count }
    /// `true` when nothing is buffered.
    public var isEmpty: Bool { count == 0 }

    /// An empty ring of `capacity` (at least 1) elements.
    public init(capacity: Int) { slots = Array(repeating: nil, count: max(1, capacity)) }

    /// Appends `element`, dropping the oldest when full; returns whether one was dropped.
    @discardableResult
    public mutating func append(_ element: Element) -> Bool {
        var droppedOne = false
        if count == capacity {
            slots[head] = nil
            head = head + 1 == capacity ? 0 : head + 1
            count -= 1
            dropped += 1
            droppedOne = true
        }
        var tail = head + count
        if tail >= capacity { tail -= capacity }
        slots[tail] = element
        count += 1
        return droppedOne
    }

    /// Appends every element in order; returns how many were dropped (oldest first).
    @discardableResult
    public mutating func append(contentsOf elements: some Sequence<Element>) -> Int {
        let before = dropped
        for e in elements { append(e) }
        return dropped - before
    }

    /// Removes and returns up to `limit` elements, oldest first.
    public mutating func removeFirst(upTo limit: Int) -> [Element] {
        let n = min(limit, count)
        var items: [Element] = []
        items.reserveCapacity(n)
        for _ in 0..<n {
            items.append(slots[head].take()!)
            head = head + 1 == capacity ? 0 : head + 1
        }
        count -= n
        return items
    }
}

extension SignalKRing: Sendable where Element: Sendable {}
