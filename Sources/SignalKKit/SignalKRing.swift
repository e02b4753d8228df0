/// A bounded first-in first-out buffer that drops the **oldest** element when full and counts
/// what it dropped: the buffering policy of every Signal K consumer (a slow consumer always sees
/// the newest data, and its memory stays bounded).
///
/// Its storage grows as elements arrive (doubling, up to `capacity`), so an idle stream's
/// buffers cost a few slots, not `capacity` of them: serve runs several Signal K consumers each
/// bounded at thousands of values, almost always nearly empty.
public struct SignalKRing<Element> {
    private var slots: [Element?] = []
    private var head = 0
    /// Elements buffered.
    public private(set) var count = 0
    /// Elements dropped so far because the ring was full.
    public private(set) var dropped = 0

    /// Most elements buffered.
    public let capacity: Int
    /// `true` when nothing is buffered.
    public var isEmpty: Bool { count == 0 }

    /// An empty ring of `capacity` (at least 1) elements.
    public init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Slots allocated so far (at most `capacity`).
    var storage: Int { slots.count }

    /// Doubles the storage (at least 16 slots, at most `capacity`), the buffered elements moved
    /// to its start in order.
    private mutating func grow() {
        let size = min(capacity, max(16, slots.count * 2))
        var larger: [Element?] = []
        larger.reserveCapacity(size)
        for i in 0..<count { larger.append(slots[(head + i) % slots.count].take()) }
        larger.append(contentsOf: repeatElement(nil, count: size - count))
        slots = larger
        head = 0
    }

    /// Appends `element`, dropping the oldest when full; returns whether one was dropped.
    @discardableResult
    public mutating func append(_ element: Element) -> Bool {
        var droppedOne = false
        if count == capacity {
            slots[head] = nil
            head = head + 1 == slots.count ? 0 : head + 1
            count -= 1
            dropped += 1
            droppedOne = true
        } else if count == slots.count {
            grow()
        }
        var tail = head + count
        if tail >= slots.count { tail -= slots.count }
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
            head = head + 1 == slots.count ? 0 : head + 1
        }
        count -= n
        return items
    }
}

extension SignalKRing: Sendable where Element: Sendable {}
