import Foundation
import LookoutWire
import LookoutSim

/// A Signal K simulator for the whole test process, never stopped (stopping Hummingbird while a
/// connection arrives can trap in NIO). It never ticks by itself: tests publish every value they
/// wait for. `module` serves the module tests (apart by path, `environment.<test>.…`);
/// `reliability` is R2's own, because its restarts must not disturb the others.
public actor SignalKTestSim {
    public static let module = SignalKTestSim(seed: 5)
    public static let reliability = SignalKTestSim(seed: 11)

    public struct Running: Sendable {
        public let sim: SignalKSimulator
        public let clock: SimulatedClock
        public let base: URL
    }

    private let seed: UInt64
    private var running: Running?

    public init(seed: UInt64) { self.seed = seed }

    public func get() async throws -> Running {
        if let running { return running }
        let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
        let sim = try SignalKSimulator(options: .init(rate: 10, seed: seed, selfMMSI: "230099999", vesselName: "Lookout",
                                                      clock: clock.now, autoTick: false))
        let r = Running(sim: sim, clock: clock, base: try await sim.start())
        running = r
        return r
    }

    /// Publishes one self value, 1 ms after the previous one (no two values share a timestamp).
    public func publish(path: String, value: JSONValue) async throws {
        let r = try await get()
        r.clock.advance(by: 0.001)
        await r.sim.publish(["updates": [["values": [["path": .string(path), "value": value]]]]])
    }
}
