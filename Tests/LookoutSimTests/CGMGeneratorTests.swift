import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest

final class CGMGeneratorTests: XCTestCase {
    let end = Date(timeIntervalSince1970: 1_714_557_600)  // 2024-05-01T10:00Z

    private func sgvs(_ o: CGMGenerator.Output) -> [(Int64, Double, String)] {
        o.entries.map { ($0["date"]!.int64Value!, $0["sgv"]!.doubleValue!, $0["direction"]!.stringValue!) }
    }

    func testDeterministicRealisticAndTrendFromSlope() {
        let a = CGMGenerator(seed: 9, end: end).generate(days: 2)
        let b = CGMGenerator(seed: 9, end: end).generate(days: 2)
        let c = CGMGenerator(seed: 10, end: end).generate(days: 2)
        XCTAssertEqual(a.entries, b.entries)
        XCTAssertNotEqual(a.entries, c.entries)
        XCTAssertEqual(a.entries.count, 576)
        XCTAssertEqual(a.treatments.count, 6)
        XCTAssertEqual(a.deviceStatus.count, 576)
        let s = sgvs(a)
        XCTAssertEqual(s.last?.0, 1_714_557_600_000)
        XCTAssertTrue(zip(s, s.dropFirst()).allSatisfy { $1.0 - $0.0 == 300_000 })
        let values = s.map(\.1)
        XCTAssertTrue(values.allSatisfy { (40...400).contains($0) })
        let inRange = values.filter { (70...250).contains($0) }.count
        XCTAssertGreaterThan(Double(inRange) / Double(values.count), 0.8)
        for (p, n) in zip(s, s.dropFirst()) {
            XCTAssertEqual(n.2, CGMGenerator.direction(slopePerMinute: (n.1 - p.1) / 5).0)
        }
        XCTAssertEqual(CGMGenerator.direction(slopePerMinute: -3.5).0, "DoubleDown")
        XCTAssertEqual(CGMGenerator.direction(slopePerMinute: 0.2).1, 4)
    }

    func testScenarios() {
        let lastDay = end.timeIntervalSince1970 * 1000 - 86_400_000
        let low = sgvs(CGMGenerator(seed: 3, end: end).generate(days: 1, scenarios: [.overnightLow]))
        let night = low.filter { Double($0.0) >= lastDay + 2 * 3_600_000 && Double($0.0) <= lastDay + 4.5 * 3_600_000 }
        XCTAssertLessThan(night.map(\.1).min()!, 70)

        let comp = sgvs(CGMGenerator(seed: 3, end: end).generate(days: 1, scenarios: [.compressionLow]))
        let drop = comp.first { Double($0.0) == lastDay + 3 * 3_600_000 }
        XCTAssertEqual(drop?.2, "DoubleDown")

        let gap = sgvs(CGMGenerator(seed: 3, end: end).generate(days: 1, scenarios: [.missedReadings]))
        let maxGap = zip(gap, gap.dropFirst()).map { $1.0 - $0.0 }.max()!
        XCTAssertGreaterThanOrEqual(maxGap, 45 * 60_000)
        XCTAssertTrue(gap.contains { $0.2 == "NOT COMPUTABLE" })

        let rise = CGMGenerator(seed: 3, end: end).generate(days: 1, scenarios: [.rapidPostMealRise])
        XCTAssertTrue(sgvs(rise).contains { $0.2 == "DoubleUp" || $0.2 == "SingleUp" })
        XCTAssertTrue(rise.treatments.contains { $0["eventType"] == "Carb Correction" && $0["carbs"] == 100 })
    }

    func testFillServesThroughV1() async throws {
        let h = SimHarness()
        try await h.start()
        let out = await h.sim.fill(days: 1, seed: 5, scenarios: [.overnightLow])
        let r = try await h.request(.GET, "/api/v1/entries/sgv.json?count=3", headers: h.secretHeader)
        let got = try XCTUnwrap(r.json?.arrayValue)
        XCTAssertEqual(got.count, 3)
        XCTAssertEqual(got.first?["date"], out.entries.last?["date"])
        let ds = try await h.request(.GET, "/api/v1/devicestatus.json?count=1", headers: h.secretHeader)
        XCTAssertNotNil(ds.json?.arrayValue?.first?["loop"]?["iob"])
        await h.stop()
    }
}
