import Foundation
import LookoutSim
import NorthlightKit
import XCTest

/// One Northlight simulator for the whole test process (stopping a server while connections
/// arrive can trap in NIO). Its clock is settable; the growth tier is limited to 3 requests a
/// minute so rate limits are reached quickly. Tests keep apart by using their own projects.
actor NorthlightKitSim {
    static let shared = NorthlightKitSim()
    /// The simulator's clock (rate-limit windows).
    static let clock = SimulatedClock(Date())

    struct Running: Sendable {
        let sim: NorthlightSimulator
        let url: URL
    }

    private var running: Running?

    func start() async throws -> Running {
        if let running { return running }
        let sim = NorthlightSimulator(options: .init(rateLimits: [.free: 100, .starter: 1000, .growth: 3], clock: Self.clock.now))
        let r = Running(sim: sim, url: try await sim.start())
        running = r
        return r
    }
}

/// A fixed device description, so request bodies are predictable.
let fixedDevice = DeviceInfo(model: "Test Machine (x86_64)", osVersion: "Debian GNU/Linux 12, Linux 6.1", appVersion: "9.9.9",
                             screenResolution: "120x40", locale: "en_US", freeMemory: "2GB", batteryLevel: 0.75, networkType: "wifi")

/// Asserts that `body` throws exactly `expected`.
func assertThrows<T>(_ expected: NorthlightError, _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line) async {
    do {
        _ = try await body()
        XCTFail("expected \(expected)", file: file, line: line)
    } catch {
        XCTAssertEqual(error as? NorthlightError, expected, file: file, line: line)
    }
}

/// The keys of a JSON object body.
func jsonKeys(_ data: Data) -> Set<String> {
    Set(((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?.keys.map { $0 } ?? [])
}

/// A JSON object body.
func jsonObject(_ data: Data) -> [String: Any] {
    ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any]) ?? [:]
}
