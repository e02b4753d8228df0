import Foundation
import LookoutSim
import XCTest
@testable import NightscoutKit
import LookoutWire

/// Simulators for the Remote 2.0 tests, started once and never stopped: `main` (receiving app
/// stepped by hand) and `without` (no `/api/v2/remotecommands`, like every released Nightscout).
/// One injected clock; each test moves it to a fresh OTP period.
actor Remote2SimHarness {
    static let shared = Remote2SimHarness()
    static let secret = "this is my long pass phrase"

    let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
    private var sims: [String: (NightscoutSimulator, URL)] = [:]

    func running(_ name: String) async throws -> (NightscoutSimulator, URL) {
        if let s = sims[name] { return s }
        var loop = NightscoutSimulator.Options.LoopSettings(pumpMaxBolus: 5)
        loop.remoteCommands = name != "without"
        var o = NightscoutSimulator.Options(apiSecret: Self.secret, authFailDelay: .zero, loop: loop)
        o.clock = clock.now
        let sim = NightscoutSimulator(options: o)
        let url = try await sim.start()
        await sim.setRemoteAppMode(.manual)
        sims[name] = (sim, url)
        return (sim, url)
    }

    func client(_ name: String) async throws -> NightscoutClient {
        let (_, url) = try await running(name)
        return NightscoutClient(configuration: try NightscoutConfiguration(siteURL: url, credentials: .apiSecret(Self.secret)),
                                timeout: 20, authenticationFailureDelay: 0, now: clock.now)
    }

    /// Moves the clock to 1 s into an OTP period at least two minutes later.
    nonisolated func freshPeriod() -> Date {
        let t = clock.now().timeIntervalSince1970 + 120
        clock.set(Date(timeIntervalSince1970: (t / 30).rounded(.up) * 30 + 1))
        return clock.now()
    }
}

/// Remote 2.0 (spec §5.3): the exact wire encoding, the client calls against the simulator,
/// every state transition of the simulated receiving app, and the capability check.
final class RemoteCommandTests: XCTestCase {
    private let rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    private func text(_ d: Data) -> String { String(decoding: d, as: UTF8.self) }

    // MARK: - Encoding

    func testBolusEncodesExactlyAsTheSpecExample() {
        // 2023-03-19T12:00:00.000-0500 is 17:00 UTC.
        let created = Date(timeIntervalSince1970: 1_679_245_200)
        let c = RemoteCommand(createdDate: created, action: .bolus(amountInUnits: 1.5), otp: "287082")
        XCTAssertEqual(text(c.encoded(utcOffsetMinutes: -300)),
                       #"{"version":"2.0","createdDate":"2023-03-19T12:00:00.000-0500","sendNotification":true,"otp":"287082","#
                       + #""status":{"state":"Pending","message":""},"action":{"bolus":{"amountInUnits":1.5}}}"#)
        XCTAssertEqual(RemoteCommand.wireDate(created), "2023-03-19T17:00:00.000+0000")
        XCTAssertEqual(RemoteCommand.wireDate(created, utcOffsetMinutes: 330), "2023-03-19T22:30:00.000+0530")
    }

    func testEveryActionEncodesWithSwiftsSynthesizedEnumShape() {
        let created = Date(timeIntervalSince1970: 1_679_245_200)
        let start = Date(timeIntervalSince1970: 1_679_245_200 - 600)
        func action(_ a: RemoteAction) -> String {
            let all = text(RemoteCommand(createdDate: created, action: a, sendNotification: false).encoded())
            return String(all[all.range(of: #""action":"#)!.upperBound...].dropLast())
        }
        XCTAssertEqual(action(.bolus(amountInUnits: 0.05)), #"{"bolus":{"amountInUnits":0.05}}"#)
        XCTAssertEqual(action(.carbs(amountInGrams: 20, absorptionTime: 10_800, startDate: start)),
                       #"{"carbs":{"amountInGrams":20,"absorptionTime":10800,"startDate":"2023-03-19T16:50:00.000+0000"}}"#)
        XCTAssertEqual(action(.carbs(amountInGrams: 12.5, absorptionTime: nil, startDate: nil)), #"{"carbs":{"amountInGrams":12.5}}"#)
        XCTAssertEqual(action(.override(name: "Exercise", durationTime: 3600, remoteAddress: "")),
                       #"{"override":{"name":"Exercise","durationTime":3600,"remoteAddress":""}}"#)
        XCTAssertEqual(action(.override(name: "Pre \"Meal\"", durationTime: nil, remoteAddress: "10.0.0.1")),
                       #"{"override":{"name":"Pre \"Meal\"","remoteAddress":"10.0.0.1"}}"#)
        XCTAssertEqual(action(.cancelOverride(remoteAddress: "")), #"{"cancelOverride":{"remoteAddress":""}}"#)
        XCTAssertEqual(action(.closedLoop(active: true)), #"{"closedLoop":{"active":true}}"#)
        XCTAssertEqual(action(.autobolus(active: false)), #"{"autobolus":{"active":false}}"#)
        let whole = text(RemoteCommand(createdDate: created, action: .closedLoop(active: false), sendNotification: false).encoded())
        XCTAssertTrue(whole.contains(#""sendNotification":false,"otp":"","#), whole)
    }

    func testGuardedCommandsMapToActionsAndBack() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let commands: [LoopCommand] = [
            .bolus(units: 1.25), .carbs(grams: 20, absorptionHours: 3, startDate: start), .carbs(grams: 5),
            .override(name: "Exercise", durationMinutes: 60), .override(name: "Sick"), .cancelOverride,
            .closedLoop(active: false), .autobolus(active: true),
        ]
        for c in commands { XCTAssertEqual(RemoteAction(c).loopCommand, c) }
        XCTAssertEqual(RemoteAction(.carbs(grams: 20, absorptionHours: 3)), .carbs(amountInGrams: 20, absorptionTime: 10_800, startDate: nil))
        XCTAssertEqual(RemoteAction(.override(name: "E", durationMinutes: 60)), .override(name: "E", durationTime: 3600, remoteAddress: ""))
    }

    func testDecodingRoundTripsAndNamesWhatIsWrong() throws {
        let created = Date(timeIntervalSince1970: 1_679_245_200.123)
        for action: RemoteAction in [.bolus(amountInUnits: 1.5), .carbs(amountInGrams: 20, absorptionTime: 7200, startDate: created),
                                     .override(name: "Exercise", durationTime: nil, remoteAddress: "x"), .cancelOverride(remoteAddress: ""),
                                     .closedLoop(active: true), .autobolus(active: false)] {
            var c = RemoteCommand(id: "abc", createdDate: created, action: action, otp: "123456")
            c.status = CommandStatus(state: .error, message: "Password 123456 has expired")
            let decoded = try RemoteCommand(json: try JSONParser.parse(c.encoded(includingID: true)))
            XCTAssertEqual(decoded, c)
        }
        let bad: [(String, String)] = [
            (#"[]"#, "expected an object"),
            (#"{"version":"2.0","createdDate":"yesterday","status":{"state":"Pending"},"action":{"bolus":{"amountInUnits":1}}}"#, "'createdDate' is not a date"),
            (#"{"version":"2.0","createdDate":"2023-03-19T12:00:00.000-0500","status":{"state":"Done"},"action":{"bolus":{"amountInUnits":1}}}"#, "unknown status.state 'Done'"),
            (#"{"version":"2.0","createdDate":"2023-03-19T12:00:00.000-0500","status":{"state":"Pending"},"action":{"bolus":{"amountInUnits":"1"}}}"#, "'amountInUnits' must be a number"),
            (#"{"version":"2.0","createdDate":"2023-03-19T12:00:00.000-0500","status":{"state":"Pending"},"action":{"tempBasal":{}}}"#, "unknown action 'tempBasal'"),
            (#"{"version":"2.0","createdDate":"2023-03-19T12:00:00.000-0500","status":{"state":"Pending"},"action":{}}"#, "'action' must be an object with one key"),
        ]
        for (json, expected) in bad {
            XCTAssertThrowsError(try RemoteCommand(json: try JSONParser.parse(json))) { error in
                XCTAssertTrue(String(describing: error).contains(expected), "\(error) should contain \(expected)")
            }
        }
    }

    func testDescriptionNeverShowsTheOTP() {
        let c = RemoteCommand(id: "x1", createdDate: Date(), action: .bolus(amountInUnits: 1), otp: "287082")
        XCTAssertEqual(c.description, "remote command x1 bolus 1 U Pending")
        XCTAssertFalse(String(reflecting: RemoteCommandsError.notSupported).contains("287082"))
    }

    // MARK: - Guard

    func testTogglesNeedConfigurationAndAreDuplicateChecked() async throws {
        let t0 = Date(timeIntervalSince1970: 1_714_557_600)
        let site = "https://ns.example"
        let log = InMemoryAuditLog()
        let off = try RemoteCommandGuard(limits: TherapyLimits(maxBolusUnits: 1, maxBolusUnitsPerHour: 1, live: true), log: InMemoryAuditLog())
        let refused = await off.authorize(.closedLoop(active: false), site: site, now: t0).refusal
        XCTAssertEqual(refused, .notConfigured(kind: "closed_loop"))
        let limits = TherapyLimits(duplicateWindow: 600, live: true, allowedToggles: ["closed_loop"])
        let g = try RemoteCommandGuard(limits: limits, log: log)
        let decision = await g.authorize(.closedLoop(active: false), site: site, now: t0)
        let first = try XCTUnwrap(decision.ticket)
        await g.complete(first, outcome: .sent(), now: t0)
        let again = await g.authorize(.closedLoop(active: false), site: site, now: t0 + 10).refusal
        XCTAssertEqual(again?.code, "duplicate")
        let other = await g.authorize(.closedLoop(active: true), site: site, now: t0 + 20).ticket
        XCTAssertNotNil(other, "switching back is not a duplicate")
        let autobolus = await g.authorize(.autobolus(active: true), site: site, now: t0 + 30).refusal
        XCTAssertEqual(autobolus, .notConfigured(kind: "autobolus"))
        await g.reportAppError(first, detail: "remote command 2.0 x: Error: Pump error", now: t0 + 40)
        // After a restart the duplicate window still holds (toggles are read back from the log).
        let restarted = try RemoteCommandGuard(limits: limits, log: log)
        let afterRestart = await restarted.authorize(.closedLoop(active: false), site: site, now: t0 + 60).refusal
        XCTAssertEqual(afterRestart?.code, "duplicate")
        let phases = await log.entries.map(\.phase)
        XCTAssertEqual(phases, [.attempted, .sent, .refused, .attempted, .refused, .appError, .refused])
        let firstCommand = await log.entries.first?.command.description
        XCTAssertEqual(firstCommand, "closed loop off")
        XCTAssertThrowsError(try TherapyLimits(allowedToggles: ["basal"]).validated())
    }

    // MARK: - Against the simulator

    /// A bolus command created at the harness clock's time with the code Loop accepts for it.
    private func bolus(_ units: Double, at created: Date, otp: String? = nil) throws -> RemoteCommand {
        let totp = try TOTP(base32Secret: NightscoutSimulator.Options.LoopSettings.defaultOTPSecret)
        return RemoteCommand(createdDate: created, action: .bolus(amountInUnits: units), otp: otp ?? totp.code(at: created))
    }

    func testPendingToInProgressToSuccessAndTheTreatmentLoopUploads() async throws {
        let h = Remote2SimHarness.shared
        let (sim, _) = try await h.running("main")
        let client = try await h.client("main")
        let created = h.freshPeriod()
        let stored = try await client.sendRemoteCommand(try bolus(1.2, at: created))
        let id = try XCTUnwrap(stored.id)
        XCTAssertEqual(stored.status, CommandStatus(state: .pending))
        XCTAssertEqual(stored.action, .bolus(amountInUnits: 1.2))

        let pending = try await client.fetchRemoteCommands(since: created, state: .pending)
        XCTAssertEqual(pending.map(\.id), [id])
        _ = await sim.stepRemoteApp()
        let inProgress = try await client.remoteCommand(id: id, createdDate: created)
        XCTAssertEqual(inProgress?.status.state, .inProgress)
        let stillPending = try await client.fetchRemoteCommands(since: created, state: .pending)
        XCTAssertEqual(stillPending.count, 0)
        _ = await sim.stepRemoteApp()
        let done = try await client.waitForRemoteCommand(id: id, createdDate: created, timeout: 0)
        XCTAssertEqual(done.status, CommandStatus(state: .success, message: ""))
        let steps = await sim.remoteAppSteps().filter { $0.id == id }.map(\.state)
        XCTAssertEqual(steps, ["InProgress", "Success"])
        let boluses = await sim.documents("treatments").filter { $0["insulin"]?.doubleValue == 1.2 }
        XCTAssertEqual(boluses.count, 1, "Loop uploads the dose it enacted")
    }

    func testErrorStatesCarryTheAppsMessage() async throws {
        let h = Remote2SimHarness.shared
        let (sim, _) = try await h.running("main")
        let client = try await h.client("main")

        // Above the pump's maximum (5 U in this simulator).
        var created = h.freshPeriod()
        let big = try await client.sendRemoteCommand(try bolus(6, at: created))
        await sim.stepRemoteApp(); await sim.stepRemoteApp()
        let bigDone = try await client.waitForRemoteCommand(id: big.id!, createdDate: created, timeout: 0)
        XCTAssertEqual(bigDone.status, CommandStatus(state: .error, message: "Bolus 6 U exceeds the pump's maximum bolus of 5 U"))

        // Expired OTP: the app picks the command up more than 5 minutes after it was created.
        created = h.freshPeriod()
        let late = try await client.sendRemoteCommand(try bolus(1, at: created))
        await sim.stepRemoteApp()
        h.clock.advance(by: 301)
        await sim.stepRemoteApp()
        let lateDone = try await client.waitForRemoteCommand(id: late.id!, createdDate: created, timeout: 0)
        XCTAssertEqual(lateDone.status, CommandStatus(state: .error, message: "Password \(late.otp) has expired"))

        // A wrong code, and an injected failure.
        created = h.freshPeriod()
        let wrong = try await client.sendRemoteCommand(try bolus(1, at: created, otp: "000000"))
        await sim.stepRemoteApp(); await sim.stepRemoteApp()
        let wrongDone = try await client.remoteCommand(id: wrong.id!, createdDate: created)
        XCTAssertEqual(wrongDone?.status, CommandStatus(state: .error, message: "Password 000000 is incorrect"))
        created = h.freshPeriod()
        await sim.injectRemoteCommandFailure("Pump communication error")
        let injected = try await client.sendRemoteCommand(RemoteCommand(createdDate: created, action: .closedLoop(active: false)))
        await sim.stepRemoteApp(); await sim.stepRemoteApp()
        let injectedDone = try await client.remoteCommand(id: injected.id!, createdDate: created)
        XCTAssertEqual(injectedDone?.status, CommandStatus(state: .error, message: "Pump communication error"))
        let toggles = await sim.remoteAppToggles()
        XCTAssertTrue(toggles.closedLoop, "a failed toggle changes nothing")
    }

    func testUpdateStatusFetchByStateAndDelete() async throws {
        let h = Remote2SimHarness.shared
        let client = try await h.client("main")
        let created = h.freshPeriod()
        _ = try await client.sendRemoteCommand(RemoteCommand(createdDate: created.addingTimeInterval(-3600), action: .autobolus(active: false),
                                                             sendNotification: false))
        let a = try await client.sendRemoteCommand(RemoteCommand(createdDate: created, action: .autobolus(active: true), sendNotification: false))
        try await client.updateRemoteCommandStatus(id: a.id!, CommandStatus(state: .inProgress, message: "working"))
        let inProgress = try await client.fetchRemoteCommands(since: created, state: .inProgress)
        XCTAssertEqual(inProgress.map(\.id), [a.id])
        XCTAssertEqual(inProgress.first?.status.message, "working")
        do {
            try await client.updateRemoteCommandStatus(id: "nosuchid", CommandStatus(state: .success))
            XCTFail("an unknown id must fail")
        } catch let error as NightscoutError {
            XCTAssertEqual(error.status, 404)
        }
        try await client.deleteRemoteCommands(since: created)
        let left = try await client.fetchRemoteCommands(since: created)
        XCTAssertEqual(left.count, 0)
        let older = try await client.fetchRemoteCommands(since: created.addingTimeInterval(-86_400 * 2))
        XCTAssertFalse(older.isEmpty, "only commands since the given date are deleted")
    }

    func testASiteWithoutTheEndpointIsDetectedOnceWithAClearError() async throws {
        let h = Remote2SimHarness.shared
        let (sim, _) = try await h.running("without")
        let client = try await h.client("without")
        let supported = try await client.supportsRemoteCommands()
        XCTAssertFalse(supported)
        await sim.clearRequestLog()
        do {
            _ = try await client.sendRemoteCommand(try bolus(1, at: h.clock.now()))
            XCTFail("must throw")
        } catch {
            XCTAssertEqual(error as? RemoteCommandsError, .notSupported)
            XCTAssertEqual(String(describing: error), "remote commands 2.0 not supported by this site")
        }
        do {
            _ = try await client.fetchRemoteCommands(since: Date())
            XCTFail("must throw")
        } catch {
            XCTAssertEqual(error as? RemoteCommandsError, .notSupported)
        }
        let asked = await sim.requestLog().filter { $0.path.contains("remotecommands") }
        XCTAssertEqual(asked.count, 0, "the answer is remembered per client: nothing more is sent")

        // A fresh client asks once; a site that gains the endpoint is seen by new clients.
        let fresh = try await h.client("without")
        let again = try await fresh.supportsRemoteCommands()
        XCTAssertFalse(again)
        let mainClient = try await h.client("main")
        let yes = try await mainClient.supportsRemoteCommands()
        XCTAssertTrue(yes)
    }

    func testServerFailuresAreClearAndDecideNothing() async throws {
        let h = Remote2SimHarness.shared
        let (sim, _) = try await h.running("main")
        let client = try await h.client("main")
        let created = h.freshPeriod()
        await sim.inject(.status(500), count: 1, pathPrefix: "/api/v2/remotecommands")
        do {
            _ = try await client.sendRemoteCommand(RemoteCommand(createdDate: created, action: .closedLoop(active: true)))
            XCTFail("a 500 must throw")
        } catch let error as NightscoutError {
            XCTAssertEqual(error.status, 500)
        }
        await sim.inject(.truncated, count: 1, pathPrefix: "/api/v2/remotecommands")
        do {
            _ = try await client.fetchRemoteCommands(since: created)
            XCTFail("a truncated body must throw")
        } catch {
            XCTAssertNotEqual(error as? RemoteCommandsError, .notSupported, "\(error)")
        }
        let supported = try await client.supportsRemoteCommands()
        XCTAssertTrue(supported, "failures are not taken for a missing endpoint")
        let stored = try await client.fetchRemoteCommands(since: created)
        XCTAssertEqual(stored.count, 0, "the refused command was not stored")
    }

    func testWaitStopsAtTheTimeoutWithTheLastState() async throws {
        let h = Remote2SimHarness.shared
        let client = try await h.client("main")
        let created = h.freshPeriod()
        let c = try await client.sendRemoteCommand(RemoteCommand(createdDate: created, action: .cancelOverride(remoteAddress: ""),
                                                                 sendNotification: false))
        let sleeps = SleepRecorder()
        let started = Date()
        let last = try await client.waitForRemoteCommand(id: c.id!, createdDate: created, timeout: 0.3, pollInterval: 0.05) { s in
            try await sleeps.sleep(s)
            try await Task.sleep(nanoseconds: UInt64(s * 1e9))
        }
        XCTAssertEqual(last.status.state, .pending)
        XCTAssertGreaterThanOrEqual(sleeps.waits.count, 2)
        XCTAssertTrue(sleeps.waits.allSatisfy { $0 <= 0.05 + 1e-9 }, "\(sleeps.waits)")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.3)
    }
}
