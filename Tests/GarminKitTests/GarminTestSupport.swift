import Foundation
import GarminKit
import LookoutSim
import XCTest

/// Simulators shared by the whole test process (started lazily, never stopped: stopping
/// Hummingbird servers mid-process has trapped in NIO before). One per named configuration.
actor GarminSims {
    static let shared = GarminSims()
    private var running: [String: (GarminSimulator, URL)] = [:]

    /// The simulator named `name`, started with `options` on first use.
    func sim(_ name: String, _ options: @autoclosure () -> GarminSimulator.Options = .init()) async throws -> (GarminSimulator, URL) {
        if let r = running[name] { return r }
        let sim = GarminSimulator(options: options())
        let url = try await sim.start()
        running[name] = (sim, url)
        return (sim, url)
    }
}

/// A settable clock for the client side.
final class TestClock: @unchecked Sendable {
    // @unchecked Sendable: `offset` is only touched under `lock`.
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    /// Real time plus the offset.
    @Sendable func now() -> Date { lock.withLock { Date() + offset } }
    /// Moves the clock forward.
    func advance(_ s: TimeInterval) { lock.withLock { offset += s } }
}

enum GarminTest {
    static let email = GarminSimulator.Options.defaultEmail
    static let mfaEmail = GarminSimulator.Options.mfaEmail
    static let password = GarminSimulator.Options.defaultPassword

    static func tempDir() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("garminkit-\(UUID().uuidString)")
    }

    /// A client for `url` (retries with a 10 ms backoff factor).
    static func client(
        _ url: URL, dir: URL? = nil, flow: GarminSSOFlow = .mobileThenWidget, buffer: TimeInterval = 0,
        clock: TestClock? = nil
    ) throws -> GarminClient {
        let now: @Sendable () -> Date
        if let clock { now = { clock.now() } } else { now = { Date() } }
        return try GarminClient(
            configuration: .local(url, tokenDirectory: dir, refreshBuffer: buffer, ssoFlow: flow), now: now)
    }

    /// A logged-in client (default account, no MFA).
    static func loggedIn(_ url: URL, dir: URL? = nil, clock: TestClock? = nil, buffer: TimeInterval = 0) async throws -> GarminClient {
        let c = try client(url, dir: dir, buffer: buffer, clock: clock)
        guard case .success = try await c.login(email: email, password: password) else {
            throw GarminTestFailure("login of the account without MFA asked for MFA")
        }
        return c
    }

    static func today() -> GarminDate { GarminDate(Date()) }
}

/// Asserts that `body` throws a `GarminError` equal to `expected`.
func assertGarminError<T: Sendable>(
    _ expected: GarminError, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        XCTFail("expected \(expected)", file: file, line: line)
    } catch let e as GarminError {
        XCTAssertEqual(e, expected, file: file, line: line)
    } catch {
        XCTFail("unexpected \(error)", file: file, line: line)
    }
}

/// A failed precondition in a test helper: thrown, it fails the test (never a skip).
struct GarminTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
