import Foundation
import LookoutSim
@testable import NightscoutKit

/// One simulator shared by all client tests (started once, never stopped mid-run), with an
/// injected clock and a zero brute-force delay. Tests keep their data apart by device name and
/// date range.
actor ClientSimHarness {
    static let shared = ClientSimHarness()
    static let secret = "this is my long pass phrase"
    /// 2024-05-01T10:00:00Z.
    static let start = Date(timeIntervalSince1970: 1_714_557_600)

    let clock = SimulatedClock(ClientSimHarness.start)
    private var sim: NightscoutSimulator?
    private var url: URL?
    private var adminToken: String?

    /// The running simulator and its URL.
    func running() async throws -> (NightscoutSimulator, URL) {
        if let sim, let url { return (sim, url) }
        var o = NightscoutSimulator.Options(apiSecret: Self.secret, authFailDelay: .zero)
        o.clock = clock.now
        let s = NightscoutSimulator(options: o)
        let u = try await s.start()
        sim = s; url = u
        return (s, u)
    }

    /// An access token of an admin subject.
    func adminAccessToken() async throws -> String {
        if let adminToken { return adminToken }
        let (sim, _) = try await running()
        let t = await sim.addSubject(name: "kit-admin", roles: ["admin"])
        adminToken = t
        return t
    }

    /// A client for the simulator with `credentials`.
    func client(_ credentials: NightscoutCredentials, maximumResponseBytes: Int = 16 * 1024 * 1024,
                now: (@Sendable () -> Date)? = nil) async throws -> NightscoutClient {
        let (_, url) = try await running()
        let config = try NightscoutConfiguration(siteURL: url, credentials: credentials)
        return NightscoutClient(configuration: config, timeout: 20, maximumResponseBytes: maximumResponseBytes,
                                authenticationFailureDelay: 0, now: now ?? clock.now)
    }

    /// A client with the API secret.
    func secretClient() async throws -> NightscoutClient { try await client(.apiSecret(Self.secret)) }

    /// A client with the admin access token.
    func tokenClient() async throws -> NightscoutClient { try await client(.accessToken(try await adminAccessToken())) }
}

/// Epoch ms `offset` seconds after the harness start.
func simMillis(_ offsetSeconds: TimeInterval) -> Int64 {
    Int64(((ClientSimHarness.start.timeIntervalSince1970 + offsetSeconds) * 1000).rounded())
}
