import Foundation
@testable import SignalKKit
import XCTest

/// The batched hand-offs of the stream: the drop-oldest ring, a consumer's event queue and the
/// socket reader's inbox.
final class SignalKBatchingTests: XCTestCase {
    /// A delta event whose single value is `i` (to check order).
    private func event(_ i: Int) -> SignalKStreamEvent {
        let d = SignalKDelta(context: "vessels.self", updates: [SignalKUpdate(values: [SignalKPathValue(path: "p", value: .int(Int64(i)))])])
        return .delta(d, changes: [])
    }

    private func numbers(_ events: [SignalKStreamEvent]) -> [Int] {
        events.compactMap { e in
            guard case .delta(let d, _) = e, case .int(let i) = d.updates[0].values[0].value else { return nil }
            return Int(i)
        }
    }

    func testRingKeepsOrderAndDropsTheOldestCountingThem() {
        var ring = SignalKRing<Int>(capacity: 3)
        XCTAssertFalse(ring.append(1))
        XCTAssertEqual(ring.append(contentsOf: [2, 3]), 0)
        XCTAssertEqual(ring.append(contentsOf: [4, 5]), 2)
        XCTAssertEqual(ring.dropped, 2)
        XCTAssertEqual(ring.removeFirst(upTo: 2), [3, 4])
        XCTAssertEqual(ring.append(contentsOf: [6, 7]), 0)
        XCTAssertEqual(ring.count, 3)
        XCTAssertEqual(ring.removeFirst(upTo: 10), [5, 6, 7])
        XCTAssertTrue(ring.isEmpty)
        XCTAssertEqual(ring.dropped, 2)
    }

    /// An idle consumer's ring holds a few slots, not its bound: serve keeps several rings
    /// bounded at thousands of values (it preallocated about 4 MB of them), almost always empty.
    func testRingStorageGrowsWithWhatIsBufferedUpToItsCapacity() {
        var ring = SignalKRing<Int>(capacity: 4096)
        XCTAssertEqual(ring.storage, 0)
        for i in 0..<10 { ring.append(i) }
        XCTAssertEqual(ring.removeFirst(upTo: 4), [0, 1, 2, 3])
        for i in 10..<20 { ring.append(i) }  // wraps around inside 16 slots
        XCTAssertEqual(ring.storage, 16)
        for i in 20..<5000 { ring.append(i) }  // grows while wrapped, then drops the oldest
        XCTAssertEqual(ring.storage, 4096)
        XCTAssertEqual(ring.count, 4096)
        XCTAssertEqual(ring.dropped, 5000 - 4 - 4096)
        XCTAssertEqual(ring.removeFirst(upTo: 5000), Array(5000 - 4096..<5000))
    }

    func testEventQueueHandsOverEverythingBufferedAsOneBatchInOrder() async {
        let queue = SignalKEventQueue(capacity: 16)
        queue.append([event(1)])
        queue.append([event(2), event(3)])
        queue.append([event(4)])
        let batch = await queue.next()
        XCTAssertEqual(numbers(batch ?? []), [1, 2, 3, 4])
        XCTAssertEqual(queue.droppedCount, 0)
    }

    func testEventQueueDropsTheOldestWhenFullAndCountsThem() async {
        let queue = SignalKEventQueue(capacity: 4)
        XCTAssertEqual(queue.append((1...3).map(event)), 0)
        XCTAssertEqual(queue.append((4...10).map(event)), 6)
        XCTAssertEqual(queue.droppedCount, 6)
        let batch = await queue.next()
        XCTAssertEqual(numbers(batch ?? []), [7, 8, 9, 10])
    }

    func testEventQueueWakesAWaitingConsumerAndEndsAfterWhatIsBuffered() async {
        let queue = SignalKEventQueue(capacity: 8)
        let consumer = Task { () -> [[Int]] in
            var batches: [[Int]] = []
            for await batch in queue { batches.append(batch.compactMap { e in
                guard case .delta(let d, _) = e, case .int(let i) = d.updates[0].values[0].value else { return nil }
                return Int(i)
            }) }
            return batches
        }
        queue.append([event(1), event(2)])
        queue.append([event(3)])
        queue.finish()
        queue.append([event(4)])  // after the end: ignored
        let batches = await consumer.value
        XCTAssertEqual(batches.flatMap { $0 }, [1, 2, 3])
    }

    func testACancelledConsumerEndsAndTakesNothingMore() async {
        let queue = SignalKEventQueue(capacity: 8)
        queue.append([event(1)])
        queue.cancel()
        XCTAssertTrue(queue.isCancelled)
        XCTAssertEqual(queue.append([event(2)]), 0)
        let batch = await queue.next()
        XCTAssertNil(batch)
    }

    func testInboxKeepsOrderAcrossBatches() async {
        let inbox = SignalKInbox(limit: 3)
        let reader = Task {
            for i in 1...10 { _ = await inbox.put(.success(.warning(String(i)))) }
            inbox.close()
        }
        var got: [String] = []
        while let batch = await inbox.take() {
            XCTAssertLessThanOrEqual(batch.count, 3)
            for item in batch { if case .success(.warning(let w)) = item { got.append(w) } }
        }
        await reader.value
        XCTAssertEqual(got, (1...10).map(String.init))
    }

    /// The reader waits while `limit` frames are pending (no unbounded growth when the actor is
    /// slow): closing the inbox then releases it, and frames after the limit are refused.
    func testInboxHoldsTheReaderAtItsLimit() async {
        await holdsTheReader(SignalKInbox(limit: 2), size: 1)
    }

    /// The same with large frames: the bytes pending bound the reader too.
    func testInboxHoldsTheReaderAtItsByteLimit() async {
        await holdsTheReader(SignalKInbox(limit: 100, byteLimit: 10), size: 6)
    }

    /// Puts 5 frames of `size` bytes; the inbox must stop the reader after the second.
    private func holdsTheReader(_ inbox: SignalKInbox, size: Int, line: UInt = #line) async {
        let reader = Task { () -> Int in
            var accepted = 0
            for i in 1...5 {
                guard await inbox.put(.success(.warning(String(i))), size: size) else { break }
                accepted += 1
            }
            return accepted
        }
        var spins = 0
        while inbox.pendingCount < 2 && spins < 1_000_000 {
            spins += 1
            await Task.yield()
        }
        XCTAssertEqual(inbox.pendingCount, 2, line: line)
        inbox.close()
        let accepted = await reader.value
        XCTAssertEqual(accepted, 2, line: line)
        let batch = await inbox.take()
        XCTAssertEqual(batch?.count, 2, line: line)
        let end = await inbox.take()
        XCTAssertNil(end, line: line)
    }
}

/// The timestamp text pushed per delta is written without allocating; it must equal `format`.
final class SignalKTimestampBytesTests: XCTestCase {
    func testFormattedBytesMatchFormat() {
        let seconds: [Double] = [0, -0.001, 1_405_763_055.123, 253_402_300_799.999, -62_167_219_200, 951_782_400.007,
                                 1_714_557_600.5, 253_402_300_800 /* year 10000 */, -62_167_219_200.001 /* year -1 */]
        for s in seconds {
            let date = Date(timeIntervalSince1970: s)
            let text = SignalKTimestamp.withFormatted(date) { String(decoding: $0, as: UTF8.self) }
            XCTAssertEqual(text, SignalKTimestamp.format(date), "\(s)")
        }
        XCTAssertEqual(SignalKTimestamp.withFormatted(Date(timeIntervalSince1970: 951_782_400.007)) { String(decoding: $0, as: UTF8.self) },
                       "2000-02-29T00:00:00.007Z")
    }
}
