import Foundation
import LookoutSim

/// One Nightscout simulator for the whole test process (stopping a server while a connection
/// arrives can trap in NIO), with an admin and a read-only subject. Tests keep their data apart
/// by device name and time range.
public actor NightscoutModuleSim {
    public static let shared = NightscoutModuleSim()
    public static let secret = "this is my long pass phrase"

    public struct Running: Sendable {
        public let sim: NightscoutSimulator
        public let url: URL
        public let adminToken: String
        public let readerToken: String
    }

    private var running: Running?

    public func start() async throws -> Running {
        if let running { return running }
        let sim = NightscoutSimulator(options: .init(apiSecret: Self.secret, authFailDelay: .zero))
        let url = try await sim.start()
        let admin = await sim.addSubject(name: "lua-admin", roles: ["admin"])
        let reader = await sim.addSubject(name: "lua-reader", roles: ["readable"])
        let r = Running(sim: sim, url: url, adminToken: admin, readerToken: reader)
        running = r
        return r
    }
}
