import Foundation
import LookoutSim
import XCTest
@testable import NightscoutKit

/// Simulators for the Loop remote tests, started once and never stopped (stopping a Hummingbird
/// server while a connection arrives traps in NIO). They share one injected clock; each test
/// moves it forward, so OTP periods and `sent-at` ids never collide between tests.
actor LoopRemoteSimHarness {
    static let shared = LoopRemoteSimHarness()
    static let secret = "this is my long pass phrase"

    let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
    private var sims: [String: (NightscoutSimulator, URL)] = [:]

    /// The simulator `name`: `main` (Loop app enacting), `offline` (Loop app not answering),
    /// `noAPNsKey` (`LOOP_APNS_KEY` unset). All have a profile with `loopSettings`.
    func running(_ name: String) async throws -> (NightscoutSimulator, URL) {
        if let s = sims[name] { return s }
        var loop = NightscoutSimulator.Options.LoopSettings()
        switch name {
        case "offline": loop.enact = false
        case "noAPNsKey": loop.apnsKey = nil
        default: break
        }
        var o = NightscoutSimulator.Options(apiSecret: Self.secret, authFailDelay: .zero, loop: loop)
        o.clock = clock.now
        let sim = NightscoutSimulator(options: o)
        let url = try await sim.start()
        await sim.seed("profile", [[
            "startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
            "loopSettings": ["deviceToken": "0123abcd", "bundleIdentifier": "com.LOOKOUT01.loopkit.Loop"],
        ]])
        sims[name] = (sim, url)
        return (sim, url)
    }

    /// A client with `credentials` for simulator `name`.
    func client(_ name: String, credentials: NightscoutCredentials = .apiSecret(secret)) async throws -> NightscoutClient {
        let (_, url) = try await running(name)
        return NightscoutClient(configuration: try NightscoutConfiguration(siteURL: url, credentials: credentials),
                                timeout: 20, authenticationFailureDelay: 0, now: clock.now)
    }

    /// Moves the clock forward to `offset` seconds into the next OTP period after a gap.
    nonisolated func startFreshPeriod(gap: TimeInterval = 120, offset: TimeInterval = 1) {
        let t = clock.now().timeIntervalSince1970 + gap
        clock.set(Date(timeIntervalSince1970: (t / 30).rounded(.up) * 30 + offset))
    }
}

/// Counts injected sleeps (no real waiting) and runs an optional action on each.
final class SleepRecorder: @unchecked Sendable {
    // @unchecked Sendable: guarded by `lock`.
    private let lock = NSLock()
    private var calls: [TimeInterval] = []
    /// The recorded waits.
    var waits: [TimeInterval] { lock.withLock { calls } }
    /// A `LoopRemote.sleep` that records and returns at once.
    var sleep: @Sendable (TimeInterval) async throws -> Void {
        { [self] seconds in lock.withLock { calls.append(seconds) } }
    }
}

final class LoopRemoteTests: XCTestCase {
    var harness: LoopRemoteSimHarness { .shared }

    func remote(_ name: String = "main", sleep: SleepRecorder = SleepRecorder(), timeout: TimeInterval = 60) async throws
        -> LoopRemote
    {
        LoopRemote(client: try await harness.client(name), pollInterval: 10, timeout: timeout,
                   now: harness.clock.now, sleep: sleep.sleep)
    }

    func loopTOTP(_ name: String = "main") async throws -> TOTP {
        let (sim, _) = try await harness.running(name)
        return try TOTP(url: sim.options.loop.otpURL)
    }

    // MARK: - Payloads

    func testPayloadsMatchSpecExamplesByteForByte() throws {
        func text(_ d: Data) -> String { String(decoding: d, as: UTF8.self) }
        XCTAssertEqual(text(LoopCommand.bolus(units: 1.5).notificationBody(otp: "287082")),
                       #"{"eventType":"Remote Bolus Entry","remoteBolus":"1.5","otp":"287082"}"#)
        let start = try XCTUnwrap(NightscoutDate(string: "2024-05-01T12:30:41Z")).date
        XCTAssertEqual(text(LoopCommand.carbs(grams: 20, startDate: start).notificationBody(otp: "081804")),
                       #"{"eventType":"Remote Carbs Entry","remoteCarbs":"20.0","remoteAbsorption":"3.0","otp":"081804","created_at":"2024-05-01T12:30:41.000Z"}"#)
        XCTAssertEqual(text(LoopCommand.override(name: "Exercise", durationMinutes: 60)
                                .notificationBody(notes: "", reasonDisplay: "🏃 Exercise")),
                       #"{"eventType":"Temporary Override","reason":"Exercise","reasonDisplay":"🏃 Exercise","duration":"60.0","notes":""}"#)
        XCTAssertEqual(text(LoopCommand.cancelOverride.notificationBody()),
                       #"{"eventType":"Temporary Override Cancel","duration":"0"}"#)

        // Carbs without a start time use `now` (ISO with ms); absorption, notes and enteredBy.
        let now = Date(timeIntervalSince1970: 1_714_557_600.123)
        XCTAssertEqual(text(LoopCommand.carbs(grams: 12.5, absorptionHours: 2).notificationBody(
                           otp: "123456", notes: "pizza \"slice\"\n", enteredBy: "Lookout", now: now)),
                       #"{"eventType":"Remote Carbs Entry","remoteCarbs":"12.5","remoteAbsorption":"2.0","otp":"123456","created_at":"2024-05-01T10:00:00.123Z","notes":"pizza \"slice\"\n","enteredBy":"Lookout"}"#)
        // Override without duration (until cancelled), display defaults to the name; no OTP ever.
        XCTAssertEqual(text(LoopCommand.override(name: "Pre-Meal").notificationBody(otp: "111111", enteredBy: "caregiver")),
                       #"{"eventType":"Temporary Override","reason":"Pre-Meal","reasonDisplay":"Pre-Meal","enteredBy":"caregiver"}"#)
        // The bodies are valid JSON.
        for c: LoopCommand in [.bolus(units: 0.05), .carbs(grams: 1), .override(name: "a\u{1}b"), .cancelOverride] {
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: c.notificationBody(otp: "1", notes: "\u{7}")))
        }
        XCTAssertEqual(LoopCommand.bolus(units: 1.5).loopActionDescription, "Bolus Entry 1.5 U")
        XCTAssertEqual(LoopCommand.carbs(grams: 20).loopActionDescription, "Carb Entry 20 g")
        XCTAssertEqual(LoopCommand.override(name: "Exercise").loopActionDescription, "Override Exercise")
        XCTAssertEqual(LoopCommand.cancelOverride.loopActionDescription, "Cancel Override")
    }

    func testRequestUsesV2PathAndV1Headers() async throws {
        let r = try await remote()
        let request = r.request(body: Data("{}".utf8))
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.url.path, "/api/v2/notifications/loop")
        let headers = Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(headers["api-secret"], "b723e97aa97846eb92d5264f084b2823f57c4aa1")
        XCTAssertEqual(headers["content-type"], "application/json")
        XCTAssertFalse(request.description.contains("this is my long pass phrase"))
    }

    func testInvalidCommandsAreNotSent() async throws {
        let r = try await remote()
        for bad: LoopCommand in [.bolus(units: 0), .bolus(units: .nan), .carbs(grams: -1), .carbs(grams: 10, absorptionHours: 0),
                                 .override(name: " "), .override(name: "x", durationMinutes: -5)] {
            do {
                _ = try await r.send(bad, otp: nil)
                XCTFail("sent \(bad)")
            } catch let error as LoopRemoteError {
                guard case .invalidCommand = error else { return XCTFail("\(error)") }
            }
        }
    }

    // MARK: - Against the simulator

    func testBolusWithValidOTPIsConfirmed() async throws {
        harness.startFreshPeriod()
        let sleeps = SleepRecorder()
        let r = try await remote(sleep: sleeps)
        let totp = try await loopTOTP()
        let receipt = try await r.send(.bolus(units: 1.5), otp: totp, notes: "lunch", enteredBy: "Lookout")
        let body = String(decoding: receipt.body, as: UTF8.self)
        XCTAssertTrue(body.contains(#""otp":"\#(totp.code(at: harness.clock.now()))""#), body)
        let outcome = try await r.outcome(of: receipt)
        guard case .confirmed(let dose) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(dose.eventType, .correctionBolus)
        XCTAssertEqual(dose.insulin, 1.5)
        XCTAssertEqual(dose.enteredBy, "loop://iPhone")
        XCTAssertEqual(dose.time?.date, receipt.sentAt)
        XCTAssertEqual(sleeps.waits, [], "confirmed on the first poll")
        let (sim, _) = try await harness.running("main")
        let last = await sim.receivedLoopNotifications().last
        XCTAssertEqual(last?.push?.payload["entered-by"], "Lookout")
    }

    func testReusedOTPFailsWithLoopsNote() async throws {
        harness.startFreshPeriod(offset: 1)
        let r = try await remote()
        let totp = try await loopTOTP()
        let first = try await r.sendAndWait(.bolus(units: 0.8), otp: totp)
        guard case .confirmed = first else { return XCTFail("\(first)") }
        harness.clock.advance(by: 3)  // same 30 s period → same code
        let code = totp.code(at: harness.clock.now())
        let second = try await r.sendAndWait(.bolus(units: 0.8), otp: totp)
        XCTAssertEqual(second, .failed(reason: "Password \(code) was already used"))
    }

    func testExpiredAndMissingOTPFail() async throws {
        harness.startFreshPeriod(offset: 10)
        let r = try await remote()
        let totp = try await loopTOTP()
        // A code from two periods ago (the sender's clock 65 s behind).
        let stale = harness.clock.now() - 65
        let expired = try await r.sendAndWait(.bolus(units: 2), otp: totp, now: stale)
        XCTAssertEqual(expired, .failed(reason: "Password \(totp.code(at: stale)) has expired"))
        harness.clock.advance(by: 2)
        let missing = try await r.sendAndWait(.carbs(grams: 15), otp: nil)
        XCTAssertEqual(missing, .failed(reason: "Missing OTP"))
        harness.clock.advance(by: 2)
        // A code from another secret is incorrect.
        let other = try TOTP(base32Secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP")
        let wrong = try await r.sendAndWait(.carbs(grams: 15), otp: other)
        XCTAssertEqual(wrong, .failed(reason: "Password \(other.code(at: harness.clock.now())) is incorrect"))
    }

    func testCarbsWithStartTimeAreConfirmed() async throws {
        harness.startFreshPeriod()
        let r = try await remote()
        let start = harness.clock.now() - 20 * 60
        let outcome = try await r.sendAndWait(.carbs(grams: 20, absorptionHours: 4, startDate: start), otp: try await loopTOTP())
        guard case .confirmed(let entry) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(entry.eventType, .carbCorrection)
        XCTAssertEqual(entry.carbs, 20)
        XCTAssertEqual(entry.absorptionTime, 240)
        XCTAssertEqual(entry.time?.date, start)
    }

    func testOverrideWithoutOTPThenCancel() async throws {
        harness.startFreshPeriod()
        let r = try await remote()
        let receipt = try await r.send(.override(name: "Exercise", durationMinutes: 60), otp: try await loopTOTP(),
                                       reasonDisplay: "🏃 Exercise")
        XCTAssertFalse(String(decoding: receipt.body, as: UTF8.self).contains("otp"), "overrides carry no OTP")
        let started = try await r.outcome(of: receipt)
        guard case .confirmed(let override) = started else { return XCTFail("\(started)") }
        XCTAssertEqual(override.eventType, .temporaryOverride)
        XCTAssertEqual(override.reason, "Exercise")
        XCTAssertEqual(override.duration, 60)

        harness.clock.advance(by: 15 * 60)
        let cancelled = try await r.sendAndWait(.cancelOverride, otp: nil)
        guard case .confirmed(let ended) = cancelled else { return XCTFail("\(cancelled)") }
        XCTAssertEqual(ended.common.id, override.common.id)
        XCTAssertEqual(ended.duration, 15)
    }

    func testOfflineLoopGivesUnknownAfterTimeoutAndLateUploadConfirms() async throws {
        harness.startFreshPeriod()
        let sleeps = SleepRecorder()
        let r = try await remote("offline", sleep: sleeps, timeout: 60)
        let totp = try await loopTOTP("offline")
        let receipt = try await r.send(.bolus(units: 1), otp: totp)
        let first = try await r.check(receipt)
        XCTAssertEqual(first, .delivered)
        let outcome = try await r.outcome(of: receipt)
        XCTAssertEqual(outcome, .unknown)
        XCTAssertEqual(sleeps.waits, [10, 10, 10, 10, 10, 10])

        // Loop uploads later (its next sync): the next poll confirms.
        let client = try await harness.client("offline")
        harness.clock.advance(by: 90)
        try await client.upload(treatments: [Treatment(
            common: CommonFields(createdAt: NightscoutDate(harness.clock.now(), asISOString: true)),
            eventType: .correctionBolus, insulin: 1, enteredBy: "loop://iPhone")])
        let late = try await r.check(receipt)
        guard case .confirmed(let dose) = late else { return XCTFail("\(late)") }
        XCTAssertEqual(dose.insulin, 1)
    }

    func testServerPreconditionErrorsKeepTheServerText() async throws {
        harness.startFreshPeriod()
        let r = try await remote("noAPNsKey")
        do {
            _ = try await r.send(.cancelOverride, otp: nil)
            XCTFail("accepted without LOOP_APNS_KEY")
        } catch let error as LoopRemoteError {
            XCTAssertEqual(error, .rejected(status: 500, message: "Loop notification failed: LOOP_APNS_KEY not set."))
            XCTAssertEqual(error.precondition, .apnsKeyMissing)
            XCTAssertTrue(error.description.contains("Loop notification failed: LOOP_APNS_KEY not set."))
        }
        XCTAssertEqual(LoopRemoteError.Precondition(serverMessage: "Loop notification failed: Could not find loopSettings in profile."),
                       .loopSettingsMissing)
        XCTAssertEqual(LoopRemoteError.Precondition(serverMessage: "APNs delivery failed: BadDeviceToken"), .apnsDeliveryFailed)
        XCTAssertEqual(LoopRemoteError.Precondition(serverMessage: "Loop remote bolus failed. Incorrect bolus entry: "), .invalidBolus)

        // Wrong secret: 401, no secret in the error.
        let (_, url) = try await harness.running("main")
        let bad = NightscoutClient(configuration: try NightscoutConfiguration(siteURL: url, credentials: .apiSecret("wrong secret 123")),
                                   timeout: 20, authenticationFailureDelay: 0)
        do {
            _ = try await LoopRemote(client: bad).send(.cancelOverride, otp: nil)
            XCTFail("accepted a wrong secret")
        } catch let error as NightscoutError {
            XCTAssertEqual(error.status, 401)
            XCTAssertFalse("\(error)".contains("wrong secret 123"))
        }
    }

    func testClosedLoopAndAutobolusAreNotSupported() {
        for feature in LoopRemoteFeature.allCases {
            let error = LoopRemote.unsupported(feature)
            XCTAssertEqual(error, .notSupportedByServer(feature))
            XCTAssertTrue(error.description.contains("not supported by this server"), error.description)
            XCTAssertNil(error.precondition)
        }
    }
}
