import Foundation
import LookoutWire
import XCTest
@testable import NightscoutKit

/// Adversarial tests for `RemoteCommandGuard` (issue R7): nothing beyond the host's therapy
/// limits is ever authorized, and every refusal is audited exactly once with its reason.
final class RemoteCommandGuardTests: XCTestCase {
    let site = "https://ns.example"
    let t0 = Date(timeIntervalSince1970: 1_714_557_600)

    /// Generous limits with the rate rules off, so one rule can be tested at a time.
    func limits(
        bolus: Double = 10, carbs: Double = 100, bolusHour: Double = 100, carbsHour: Double = 1000,
        interval: TimeInterval = 0, overrides: Set<String> = ["Exercise"], duplicate: TimeInterval = 0,
        live: Bool = true
    ) -> TherapyLimits {
        TherapyLimits(
            maxBolusUnits: bolus, maxCarbsGrams: carbs, maxBolusUnitsPerHour: bolusHour,
            maxCarbsGramsPerHour: carbsHour, minimumInterval: interval, allowedOverrides: overrides,
            duplicateWindow: duplicate, live: live)
    }

    func makeGuard(_ limits: TherapyLimits, log: InMemoryAuditLog = InMemoryAuditLog()) throws -> (RemoteCommandGuard, InMemoryAuditLog) {
        (try RemoteCommandGuard(limits: limits, log: log), log)
    }

    /// Authorizes and immediately reports the send as `outcome`; returns the decision.
    @discardableResult
    func send(_ g: RemoteCommandGuard, _ command: LoopCommand, at offset: TimeInterval,
              outcome: RemoteCommandOutcome = .sent()) async -> RemoteCommandDecision {
        let d = await g.authorize(command, site: site, source: "test.lua", now: t0 + offset)
        if let ticket = d.ticket { await g.complete(ticket, outcome: outcome, now: t0 + offset) }
        return d
    }

    // MARK: - Limits value

    func testDefaultLimitsRefuseEverything() async throws {
        XCTAssertEqual(TherapyLimits(), .refuseAll)
        XCTAssertEqual(try JSONDecoder().decode(TherapyLimits.self, from: Data("{}".utf8)), .refuseAll)
        var liveOnly = TherapyLimits(); liveOnly.live = true
        let (g, log) = try makeGuard(liveOnly)
        let table: [(LoopCommand, String)] = [
            (.bolus(units: 0.05), "notConfigured"), (.carbs(grams: 1), "notConfigured"),
            (.override(name: "Exercise"), "notConfigured"), (.cancelOverride, "notConfigured"),
        ]
        for (command, code) in table {
            let d = await g.authorize(command, site: site, now: t0)
            XCTAssertNil(d.ticket, "\(AuditCommand(command))")
            XCTAssertEqual(d.refusal?.code, code, "\(AuditCommand(command))")
        }
        // Only the hourly limit configured: still refused.
        let (g2, _) = try makeGuard(TherapyLimits(maxBolusUnitsPerHour: 5, live: true))
        let d = await g2.authorize(.bolus(units: 1), site: site, now: t0)
        XCTAssertEqual(d.refusal, .notConfigured(kind: "bolus"))
        let entries = await log.entries
        XCTAssertEqual(entries.count, 4)
        XCTAssertTrue(entries.allSatisfy { $0.phase == .refused && $0.reason?.contains("not enabled") == true })
    }

    func testLimitsValidation() throws {
        let table: [(TherapyLimits, [String])] = [
            (TherapyLimits(maxBolusUnits: -1), ["maxBolusUnits must not be negative (got -1.0)"]),
            (TherapyLimits(maxCarbsGrams: .nan), ["maxCarbsGrams must be a finite number"]),
            (TherapyLimits(maxBolusUnitsPerHour: .infinity, minimumInterval: -.infinity), [
                "maxBolusUnitsPerHour must be a finite number", "minimumInterval must be a finite number",
            ]),
            (TherapyLimits(maxCarbsGramsPerHour: 2e6), ["maxCarbsGramsPerHour must be at most 1000000.0 (got 2000000.0)"]),
            (TherapyLimits(duplicateWindow: -0.5), ["duplicateWindow must not be negative (got -0.5)"]),
            (TherapyLimits(allowedOverrides: ["", " Run"]), [
                "allowedOverrides: name \"\" must be non-empty without leading or trailing whitespace",
                "allowedOverrides: name \" Run\" must be non-empty without leading or trailing whitespace",
            ]),
            (limits(), []),
        ]
        for (value, messages) in table {
            XCTAssertEqual(value.problems.map(\.description), messages)
            if messages.isEmpty {
                XCTAssertNoThrow(try value.validated())
                XCTAssertNoThrow(try RemoteCommandGuard(limits: value, log: InMemoryAuditLog()))
            } else {
                XCTAssertThrowsError(try RemoteCommandGuard(limits: value, log: InMemoryAuditLog())) { error in
                    XCTAssertEqual(String(describing: error), "invalid therapy limits: " + messages.joined(separator: "; "))
                }
            }
        }
        XCTAssertThrowsError(try JSONDecoder().decode(TherapyLimits.self, from: Data(#"{"maxBolusUnits":-2}"#.utf8)))
        let round = try JSONDecoder().decode(TherapyLimits.self, from: JSONEncoder().encode(limits(overrides: ["B", "A"])))
        XCTAssertEqual(round, limits(overrides: ["A", "B"]))
    }

    // MARK: - Each limit at the boundary

    func testEachLimitAllowedAtLimitAndRefusedJustAbove() async throws {
        struct Case {
            var name: String
            var limits: TherapyLimits
            var before: [LoopCommand] = []
            var command: LoopCommand
            var refusal: RemoteCommandRefusal?
        }
        let cases: [Case] = [
            Case(name: "bolus max", limits: limits(bolus: 2), command: .bolus(units: 2)),
            Case(name: "bolus max+0.01", limits: limits(bolus: 2), command: .bolus(units: 2.01),
                 refusal: .exceedsMaximum(amount: 2.01, limit: 2)),
            Case(name: "bolus max 0.3 float", limits: limits(bolus: 0.3), command: .bolus(units: 0.1 + 0.2)),
            Case(name: "bolus max truncated", limits: limits(bolus: 2.555), command: .bolus(units: 2.56),
                 refusal: .exceedsMaximum(amount: 2.56, limit: 2.55)),
            Case(name: "carbs max", limits: limits(carbs: 30), command: .carbs(grams: 30)),
            Case(name: "carbs max+0.01", limits: limits(carbs: 30), command: .carbs(grams: 30.01),
                 refusal: .exceedsMaximum(amount: 30.01, limit: 30)),
            Case(name: "bolus hour", limits: limits(bolusHour: 3), before: [.bolus(units: 1), .bolus(units: 1.5)],
                 command: .bolus(units: 0.5)),
            Case(name: "bolus hour+0.01", limits: limits(bolusHour: 3), before: [.bolus(units: 1), .bolus(units: 1.5)],
                 command: .bolus(units: 0.51), refusal: .exceedsHourlyTotal(amount: 0.51, sentInHour: 2.5, limit: 3)),
            Case(name: "bolus hour tenths", limits: limits(bolusHour: 1), before: Array(repeating: .bolus(units: 0.1), count: 9),
                 command: .bolus(units: 0.1)),
            Case(name: "bolus hour tenths+1", limits: limits(bolusHour: 1), before: Array(repeating: .bolus(units: 0.1), count: 10),
                 command: .bolus(units: 0.01), refusal: .exceedsHourlyTotal(amount: 0.01, sentInHour: 1, limit: 1)),
            Case(name: "carbs hour", limits: limits(carbsHour: 50), before: [.carbs(grams: 20)], command: .carbs(grams: 30)),
            Case(name: "carbs hour+0.01", limits: limits(carbsHour: 50), before: [.carbs(grams: 20)],
                 command: .carbs(grams: 30.01), refusal: .exceedsHourlyTotal(amount: 30.01, sentInHour: 20, limit: 50)),
            Case(name: "hourly totals are per kind", limits: limits(bolusHour: 1, carbsHour: 1),
                 before: [.bolus(units: 1)], command: .carbs(grams: 1)),
            Case(name: "override allowed", limits: limits(), command: .override(name: "Exercise", durationMinutes: 60)),
            Case(name: "override not listed", limits: limits(), command: .override(name: "Pre-Meal"),
                 refusal: .overrideNotAllowed(name: "Pre-Meal", allowed: ["Exercise"])),
        ]
        for c in cases {
            let (g, log) = try makeGuard(c.limits)
            for (i, b) in c.before.enumerated() {
                let d = await send(g, b, at: Double(i))
                XCTAssertNotNil(d.ticket, "\(c.name): setup \(b) refused: \(String(describing: d.refusal))")
            }
            let d = await g.authorize(c.command, site: site, now: t0 + 100)
            if let refusal = c.refusal {
                XCTAssertEqual(d.refusal, refusal, c.name)
                let last = await log.entries.last
                XCTAssertEqual(last?.phase, .refused, c.name)
                XCTAssertEqual(last?.reason, refusal.description, c.name)
            } else {
                XCTAssertNotNil(d.ticket, "\(c.name): \(String(describing: d.refusal))")
            }
        }
    }

    // MARK: - Garbage values

    func testGarbageAmountsAndParametersAreRefused() async throws {
        let (g, log) = try makeGuard(limits())
        let table: [(LoopCommand, String)] = [
            (.bolus(units: .nan), "notFinite"), (.bolus(units: -.nan), "notFinite"),
            (.bolus(units: .infinity), "notFinite"), (.bolus(units: -.infinity), "notFinite"),
            (.bolus(units: -1), "amountNotPositive"), (.bolus(units: 0), "amountNotPositive"),
            (.bolus(units: -0.0), "amountNotPositive"), (.bolus(units: -1e-300), "amountNotPositive"),
            (.bolus(units: 1e-300), "tooPrecise"), (.bolus(units: .leastNonzeroMagnitude), "tooPrecise"),
            (.bolus(units: .leastNormalMagnitude), "tooPrecise"), (.bolus(units: 0.005), "tooPrecise"),
            (.bolus(units: 0.009999), "tooPrecise"), (.bolus(units: 1.001), "tooPrecise"),
            (.bolus(units: 1e300), "exceedsMaximum"), (.bolus(units: .greatestFiniteMagnitude), "exceedsMaximum"),
            (.bolus(units: 10.000001), "tooPrecise"), (.bolus(units: 10.004), "tooPrecise"),
            (.carbs(grams: .nan), "notFinite"), (.carbs(grams: -5), "amountNotPositive"),
            (.carbs(grams: 1e-300), "tooPrecise"), (.carbs(grams: 1e9), "exceedsMaximum"),
            (.carbs(grams: 10, absorptionHours: .nan), "notFinite"),
            (.carbs(grams: 10, absorptionHours: -3), "invalidParameter"),
            (.carbs(grams: 10, absorptionHours: 0), "invalidParameter"),
            (.carbs(grams: 10, startDate: Date(timeIntervalSinceReferenceDate: .infinity)), "notFinite"),
            (.override(name: "Exercise", durationMinutes: .nan), "notFinite"),
            (.override(name: "Exercise", durationMinutes: -60), "invalidParameter"),
            (.override(name: "Exercise", durationMinutes: .infinity), "notFinite"),
            (.override(name: "Exercise", durationMinutes: 1e300), "invalidParameter"),
            (.carbs(grams: 10, absorptionHours: 1e300), "invalidParameter"),
            (.carbs(grams: 10, absorptionHours: 24.01), "invalidParameter"),
        ]
        for (command, code) in table {
            let d = await g.authorize(command, site: site, source: "evil.lua", now: t0)
            XCTAssertNil(d.ticket, "\(AuditCommand(command))")
            XCTAssertEqual(d.refusal?.code, code, "\(AuditCommand(command)): \(String(describing: d.refusal))")
        }
        let empty = await g.authorize(.bolus(units: 1), site: "  ", now: t0)
        XCTAssertEqual(empty.refusal, .invalidSite)
        let entries = await log.entries
        XCTAssertEqual(entries.count, table.count + 1)
        XCTAssertEqual(entries.map(\.reasonCode), table.map(\.1) + ["invalidSite"])
        XCTAssertTrue(entries.allSatisfy { $0.verdict == .refused && $0.ticketID == nil })
        // Smallest valid amount still passes.
        let ok = await g.authorize(.bolus(units: 0.01), site: site, now: t0)
        XCTAssertEqual(ok.ticket?.command, .bolus(units: 0.01))
    }

    func testAmountsAreNormalizedToHundredths() async throws {
        let (g, _) = try makeGuard(limits())
        let d = await g.authorize(.bolus(units: 0.1 + 0.2), site: site, now: t0)
        XCTAssertEqual(d.ticket?.command, .bolus(units: 0.3))
        let c = await g.authorize(.carbs(grams: 12.3400000001, absorptionHours: 2), site: site, now: t0)
        XCTAssertEqual(c.ticket?.command, .carbs(grams: 12.34, absorptionHours: 2))
    }

    // MARK: - Concurrency

    func testHundredConcurrentCallersGetExactlyTheHourlyLimit() async throws {
        let (g, log) = try makeGuard(limits(bolus: 1, bolusHour: 5))
        let site = site, t0 = t0
        let decisions = await withTaskGroup(of: RemoteCommandDecision.self) { group in
            for i in 0..<100 {
                group.addTask { await g.authorize(.bolus(units: 1), site: site, source: "task\(i)", now: t0) }
            }
            var all: [RemoteCommandDecision] = []
            for await d in group { all.append(d) }
            return all
        }
        XCTAssertEqual(decisions.filter { $0.ticket != nil }.count, 5)
        let refusals = decisions.compactMap(\.refusal)
        XCTAssertEqual(refusals.count, 95)
        XCTAssertTrue(refusals.allSatisfy { $0 == .exceedsHourlyTotal(amount: 1, sentInHour: 5, limit: 5) })
        let entries = await log.entries
        XCTAssertEqual(entries.filter { $0.phase == .attempted }.count, 5)
        XCTAssertEqual(entries.filter { $0.phase == .refused && $0.reasonCode == "exceedsHourlyTotal" }.count, 95)
    }

    /// Issue 13 §3 at the Kit level: guards sharing one ledger (other processes, other
    /// profiles) share one budget per site, even when they ask at the same time.
    func testGuardsOnOneLedgerShareOneBudget() async throws {
        let ledger = InMemoryAuditLog()
        let guards = try (0..<4).map { _ in try RemoteCommandGuard(limits: limits(bolus: 2, bolusHour: 4), ledger: ledger) }
        let site = site, t0 = t0
        let allowed = await withTaskGroup(of: Double.self) { group in
            for (i, g) in guards.enumerated() {
                for _ in 0..<3 {
                    group.addTask { await g.authorize(.bolus(units: 2), site: site, source: "p\(i)", now: t0 + 1).ticket == nil ? 0 : 2 }
                }
            }
            var total = 0.0
            for await units in group { total += units }
            return total
        }
        XCTAssertEqual(allowed, 4)
        let refused = await ledger.entries.filter { $0.phase == .refused && $0.reasonCode == "exceedsHourlyTotal" }.count
        XCTAssertEqual(refused, 10)
        // Another site keeps its own budget.
        do { let value = await guards[0].authorize(.bolus(units: 2), site: "https://other.example", now: t0 + 2).ticket; XCTAssertNotNil(value) }
    }

    func testSiteKeyIsTheCanonicalOriginAndPath() throws {
        let table: [(String, String)] = [
            ("https://NS.Example.org", "https://ns.example.org"), ("HTTPS://ns.example.org:443/", "https://ns.example.org"),
            ("http://ns.example.org:80/x//", "http://ns.example.org/x"), ("https://ns.example.org:8443/a/B/", "https://ns.example.org:8443/a/b"),
            ("http://127.0.0.1:1337", "http://127.0.0.1:1337"), ("https://u:p@ns.example.org/?token=x#f", "https://ns.example.org"),
            // Issue 24 §4: the spellings of one site.
            ("http://127.0.0.1:1337/.", "http://127.0.0.1:1337"), ("http://127.0.0.1:1337/%2e", "http://127.0.0.1:1337"),
            ("http://127.0.0.1.:1337", "http://127.0.0.1:1337"), ("http://127.1:1337", "http://127.0.0.1:1337"),
            ("http://[::ffff:127.0.0.1]:1337", "http://127.0.0.1:1337"), ("http://[::FFFF:7f00:1]:1337/", "http://127.0.0.1:1337"),
            ("http://2130706433:1337", "http://127.0.0.1:1337"), ("http://0x7f.1:1337", "http://127.0.0.1:1337"),
            ("http://[0:0::1]:1337", "http://[::1]:1337"), ("https://NS.example.org.:443/ns/./a/../", "https://ns.example.org/ns"),
            ("https://ns.example.org/%4E%53//", "https://ns.example.org/ns"),
        ]
        for (text, key) in table { XCTAssertEqual(RemoteCommandSite.key(for: try XCTUnwrap(URL(string: text))), key, text) }
        // A host name's keys include the addresses it resolves to.
        let localhost = RemoteCommandSite.keys(for: try XCTUnwrap(URL(string: "http://LOCALHOST.:1337/")))
        XCTAssertEqual(localhost.first, "http://localhost:1337")
        XCTAssertTrue(localhost.contains("http://127.0.0.1:1337"), "\(localhost)")
        XCTAssertEqual(RemoteCommandSite.keys(for: try XCTUnwrap(URL(string: "http://127.1:1337"))), ["http://127.0.0.1:1337"])
    }

    /// Issue 24 §4: commands sharing any key (another spelling's key, a Loop device's key)
    /// share one budget; commands sharing none do not.
    func testCommandsSharingAKeyShareOneBudget() async throws {
        let (g, _) = try makeGuard(limits(bolus: 2, bolusHour: 4))
        let device = try XCTUnwrap(RemoteCommandSite.deviceKey(deviceToken: "ABC", bundleIdentifier: "com.x.Loop"))
        XCTAssertEqual(RemoteCommandSite.deviceKey(deviceToken: "abc ", bundleIdentifier: "COM.X.LOOP"), device)
        XCTAssertFalse(device.contains("abc"), "the token is not stored")
        let a = await g.authorize(.bolus(units: 2), site: "http://localhost:1", keys: ["http://127.0.0.1:1"], now: t0)
        XCTAssertNotNil(a.ticket)
        let b = await g.authorize(.bolus(units: 2), site: "http://127.0.0.1:1", keys: [device], now: t0 + 1)
        XCTAssertNotNil(b.ticket)
        // Another site, but the same device: the hour is spent.
        let c = await g.authorize(.bolus(units: 2), site: "https://elsewhere.example", keys: [device], now: t0 + 2)
        XCTAssertEqual(c.refusal?.code, "exceedsHourlyTotal")
        // Through the first spelling only, the same.
        let d = await g.authorize(.bolus(units: 0.5), site: "http://localhost:1", now: t0 + 3)
        XCTAssertEqual(d.refusal?.code, "exceedsHourlyTotal")
        // Nothing in common: its own budget.
        let e = await g.authorize(.bolus(units: 2), site: "https://other.example", keys: ["loop-device:other"], now: t0 + 4)
        XCTAssertNotNil(e.ticket)
    }

    /// Issue 24 §4: a period's one-time code is given out once per pump (any key in common);
    /// the next command waits for the next period within its wait, or is refused.
    func testOneTimeCodesAreNeverGivenTwiceForOnePump() async throws {
        let (g, _) = try makeGuard(limits())
        let otp = try TOTP(base32Secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", period: 1)
        let start = t0
        let fixed: @Sendable () -> Date = { start + 0.2 }
        let firstDecision = await g.authorize(.bolus(units: 1), site: site, keys: ["loop-device:x"], now: t0)
        let secondDecision = await g.authorize(.bolus(units: 1.1), site: "https://b.example", keys: ["loop-device:x"], now: t0)
        let thirdDecision = await g.authorize(.bolus(units: 1.2), site: "https://c.example", now: t0)
        let first = try XCTUnwrap(firstDecision.ticket), second = try XCTUnwrap(secondDecision.ticket)
        let third = try XCTUnwrap(thirdDecision.ticket)
        let a = try await g.oneTimeCode(for: first, otp: otp, wait: 0, clock: fixed).get()
        XCTAssertEqual(a.code, otp.code(at: t0))
        // The same pump, no wait: refused, saying when the next code comes.
        switch await g.oneTimeCode(for: second, otp: otp, wait: 0, clock: fixed) {
        case .failure(.codeInUse(let next, let wait)):
            XCTAssertEqual(next, 0.85, accuracy: 0.001)
            XCTAssertEqual(wait, 0)
        case let other: XCTFail("\(other)")
        }
        // Another pump: this period's code.
        let c = try await g.oneTimeCode(for: third, otp: otp, wait: 0, clock: fixed).get()
        XCTAssertEqual(c.code, a.code)
        // The same pump with a wait: the next period's code (the clock moves 0.5 s a reading).
        let readings = Locked(0)
        let stepping: @Sendable () -> Date = { start + 0.3 + 0.5 * Double(readings.withLock { n in defer { n += 1 }; return n }) }
        let b = try await g.oneTimeCode(for: second, otp: otp, wait: 5, clock: stepping).get()
        XCTAssertEqual(otp.counter(at: b.time), otp.counter(at: t0) + 1)
        XCTAssertEqual(b.code, otp.code(at: t0 + 1))
        XCTAssertNotEqual(b.code, a.code)
    }

    // MARK: - Windows

    func testRollingHourWindow() async throws {
        let (g, _) = try makeGuard(limits(bolus: 2, bolusHour: 2))
        do { let value = await send(g, .bolus(units: 2), at: 0).ticket; XCTAssertNotNil(value) }
        let table: [(TimeInterval, Bool)] = [(60, false), (59 * 60, false), (3599.9, false), (61 * 60, true)]
        for (offset, allowed) in table {
            let d = await g.authorize(.bolus(units: 2), site: site, now: t0 + offset)
            XCTAssertEqual(d.ticket != nil, allowed, "at \(offset) s: \(String(describing: d.refusal))")
        }
        // The 61-minute ticket is in flight: it blocks until completed and released.
        let again = await g.authorize(.bolus(units: 0.01), site: site, now: t0 + 62 * 60)
        XCTAssertEqual(again.refusal?.code, "exceedsHourlyTotal")
    }

    func testWindowStartsAtSendReportWhenLater() async throws {
        let (g, _) = try makeGuard(limits(bolusHour: 1))
        let d = await g.authorize(.bolus(units: 1), site: site, now: t0)
        await g.complete(try XCTUnwrap(d.ticket), outcome: .sent(), now: t0 + 600)
        do { let value = await g.authorize(.bolus(units: 1), site: site, now: t0 + 3601).refusal?.code; XCTAssertEqual(value, "exceedsHourlyTotal") }
        do { let value = await g.authorize(.bolus(units: 1), site: site, now: t0 + 4200).ticket; XCTAssertNotNil(value) }
    }

    func testMinimumIntervalAcrossKinds() async throws {
        let (g, log) = try makeGuard(limits(interval: 300))
        do { let value = await send(g, .bolus(units: 1), at: 0).ticket; XCTAssertNotNil(value) }
        let table: [(LoopCommand, TimeInterval, RemoteCommandRefusal?)] = [
            (.carbs(grams: 10), 1, .tooSoon(wait: 299)),
            (.override(name: "Exercise"), 299, .tooSoon(wait: 1)),
            (.bolus(units: 1), -10, .tooSoon(wait: 310)),  // clock went back
            (.cancelOverride, 300, nil),
            (.bolus(units: 2), 301, .tooSoon(wait: 299)),
        ]
        for (command, offset, refusal) in table {
            let d = await send(g, command, at: offset)
            XCTAssertEqual(d.refusal, refusal, "\(AuditCommand(command)) at \(offset)")
        }
        let reasons = await log.entries.compactMap(\.reason)
        XCTAssertEqual(reasons.first, "too soon after the previous command: wait 299 s")
    }

    func testDuplicateWindow() async throws {
        let (g, _) = try makeGuard(limits(duplicate: 600))
        do { let value = await send(g, .bolus(units: 1), at: 0).ticket; XCTAssertNotNil(value) }
        do { let value = await send(g, .override(name: "Exercise", durationMinutes: 30), at: 0).ticket; XCTAssertNotNil(value) }
        let table: [(LoopCommand, TimeInterval, String?)] = [
            (.bolus(units: 1), 10, "duplicate"),
            (.bolus(units: 1.0000000001), 20, "duplicate"),
            (.override(name: "Exercise", durationMinutes: 60), 30, "duplicate"),
            (.bolus(units: 1.01), 40, nil),
            (.carbs(grams: 1), 50, nil),
            (.bolus(units: 1), 599, "duplicate"),
            (.bolus(units: 1), 600, nil),
        ]
        for (command, offset, code) in table {
            let d = await send(g, command, at: offset)
            XCTAssertEqual(d.refusal?.code, code, "\(AuditCommand(command)) at \(offset)")
        }
        let d = await g.authorize(.bolus(units: 1.01), site: site, now: t0 + 100)
        XCTAssertEqual(d.refusal, .duplicate(of: .bolus(units: 1.01), secondsAgo: 60))
        XCTAssertEqual(d.refusal?.description, "duplicate of bolus 1.01 U sent 60 s ago")
    }

    func testOverrideAllowList() async throws {
        let (g, _) = try makeGuard(limits(overrides: ["Exercise", "Pre-Meal"]))
        let table: [(String, Bool)] = [
            ("Exercise", true), ("Pre-Meal", true), ("exercise", false), ("Exercise ", false),
            ("Exercise\u{200B}", false), ("Exercis\u{0435}", false), ("", false), ("Exercise,Pre-Meal", false),
        ]
        for (name, allowed) in table {
            let d = await g.authorize(.override(name: name), site: site, now: t0)
            XCTAssertEqual(d.ticket != nil, allowed, name)
            if !allowed { XCTAssertEqual(d.refusal, .overrideNotAllowed(name: name, allowed: ["Exercise", "Pre-Meal"])) }
        }
        do { let value = await g.authorize(.cancelOverride, site: site, now: t0).ticket; XCTAssertNotNil(value) }
        let (none, _) = try makeGuard(limits(overrides: []))
        do { let value = await none.authorize(.cancelOverride, site: site, now: t0).refusal; XCTAssertEqual(value, .notConfigured(kind: "cancel_override")) }
    }

    // MARK: - Reservations and outcomes

    /// Issue 13 §2: once sent, nothing reported afterwards (Loop's failure note, a Remote 2.0
    /// `Error`, an HTTP error answer) gives budget back; only a person's release does.
    func testSentCommandsCountWhateverTheOutcomeEvidenceSays() async throws {
        let (g, log) = try makeGuard(limits(bolus: 2, bolusHour: 4))
        let firstDecision = await send(g, .bolus(units: 2), at: 0)
        let first = try XCTUnwrap(firstDecision.ticket)
        await g.reportAppError(first, detail: "Loop's failure note says: Bolus failed", now: t0 + 1)
        let secondDecision = await send(g, .bolus(units: 2), at: 2, outcome: .indeterminate(detail: "HTTP 500"))
        let second = try XCTUnwrap(secondDecision.ticket)
        await g.reportAppError(second, detail: "remote command 2.0: Error", now: t0 + 3)
        do { let value = await g.authorize(.bolus(units: 0.01), site: site, now: t0 + 4).refusal?.code; XCTAssertEqual(value, "exceedsHourlyTotal") }
        // A person releases the first (what `lookout remote release` appends): 2 U fit again.
        try await log.append(AuditEntry(ticketID: first.id, time: t0 + 5, site: site, command: AuditCommand(first.command),
                                        source: "lookout remote release", verdict: .allowed, phase: .released, detail: "released"))
        do { let value = await g.authorize(.bolus(units: 2), site: site, now: t0 + 6).ticket; XCTAssertNotNil(value) }
        do { let value = await g.authorize(.bolus(units: 0.01), site: site, now: t0 + 7).refusal?.code; XCTAssertEqual(value, "exceedsHourlyTotal") }
        let records = await log.recentCommands(site: site, since: t0)
        XCTAssertEqual(records.map(\.status), [.released, .sent, .inFlight])
    }

    func testFailedSendReleasesHourlyButNotInterval() async throws {
        let (g, log) = try makeGuard(limits(bolusHour: 2, interval: 60, duplicate: 600))
        let failed = await send(g, .bolus(units: 2), at: 0, outcome: .failed(detail: "HTTP 500"))
        XCTAssertNotNil(failed.ticket)
        do { let value = await g.authorize(.bolus(units: 2), site: site, now: t0 + 30).refusal; XCTAssertEqual(value, .tooSoon(wait: 30)) }
        // Released: the same amount (no duplicate) fits the hour again.
        let retry = await g.authorize(.bolus(units: 2), site: site, now: t0 + 60)
        let ticket = try XCTUnwrap(retry.ticket)
        // In flight: reserved.
        do { let value = await g.authorize(.bolus(units: 0.01), site: site, now: t0 + 120).refusal?.code; XCTAssertEqual(value, "exceedsHourlyTotal") }
        do { let value = await g.complete(ticket, outcome: .indeterminate(detail: "timeout"), now: t0 + 61); XCTAssertTrue(value) }
        // A second completion cannot release the reservation.
        do { let value = await g.complete(ticket, outcome: .failed(detail: "late"), now: t0 + 62); XCTAssertFalse(value) }
        do { let value = try await g.complete(XCTUnwrap(failed.ticket), outcome: .failed(detail: "again"), now: t0 + 63); XCTAssertFalse(value) }
        do { let value = await g.authorize(.bolus(units: 0.01), site: site, now: t0 + 180).refusal?.code; XCTAssertEqual(value, "exceedsHourlyTotal") }
        let phases = await log.entries.map(\.phase)
        XCTAssertEqual(phases, [.attempted, .failed, .refused, .attempted, .refused, .indeterminate, .refused])
        await g.confirm(ticket, detail: "Loop uploaded dose", now: t0 + 300)
        do { let value = await log.entries.last?.phase; XCTAssertEqual(value, .confirmed) }
    }

    func testDryRunNeverHandsOutATicket() async throws {
        let (g, log) = try makeGuard(limits(bolus: 2, bolusHour: 3, live: false))
        let table: [(LoopCommand, String)] = [
            (.bolus(units: 2), "dryRun"), (.bolus(units: 1), "dryRun"), (.bolus(units: 0.5), "exceedsHourlyTotal"),
            (.carbs(grams: 20), "dryRun"), (.override(name: "Exercise"), "dryRun"), (.cancelOverride, "dryRun"),
            (.bolus(units: 5), "exceedsMaximum"),
        ]
        for (command, code) in table {
            let d = await g.authorize(command, site: site, now: t0)
            XCTAssertNil(d.ticket)
            XCTAssertEqual(d.refusal?.code, code, "\(AuditCommand(command))")
        }
        let entries = await log.entries
        XCTAssertEqual(entries.filter { $0.phase == .dryRun }.count, 5)
        XCTAssertEqual(entries.first?.reason, "dry run: would send bolus 2 U")
        XCTAssertTrue(entries.allSatisfy { $0.verdict == .refused && $0.ticketID == nil })
        // Dry runs are not attempts: a live guard on the same log starts clean.
        let (live, _) = try makeGuard(limits(bolus: 2, bolusHour: 3), log: log)
        do { let value = await live.authorize(.bolus(units: 2), site: site, now: t0 + 1).ticket; XCTAssertNotNil(value) }
    }

    // MARK: - Restarts

    func testHistoryReloadedAfterRestart() async throws {
        let log = InMemoryAuditLog()
        let l = limits(bolusHour: 5, carbsHour: 50, interval: 120)
        do {
            let (g1, _) = try makeGuard(l, log: log)
            do { let value = await send(g1, .bolus(units: 3), at: 0).ticket; XCTAssertNotNil(value) }
            do { let value = await send(g1, .carbs(grams: 40), at: 200, outcome: .failed(detail: "HTTP 500")).ticket; XCTAssertNotNil(value) }
            // Authorized but the process "crashes" before the send is reported.
            do { let value = await g1.authorize(.bolus(units: 1), site: site, now: t0 + 400).ticket; XCTAssertNotNil(value) }
        }
        let (g2, _) = try makeGuard(l, log: log)
        let table: [(LoopCommand, TimeInterval, RemoteCommandRefusal?)] = [
            (.carbs(grams: 1), 450, .tooSoon(wait: 70)),
            (.bolus(units: 1.01), 600, .exceedsHourlyTotal(amount: 1.01, sentInHour: 4, limit: 5)),
            (.carbs(grams: 50), 601, nil),  // the failed 40 g does not count
            (.bolus(units: 1), 800, nil),
            (.bolus(units: 1), 4001, nil),  // 3 U left the window, the in-flight 1 U did not
            (.bolus(units: 3.01), 4200, .exceedsHourlyTotal(amount: 3.01, sentInHour: 2, limit: 5)),
        ]
        for (command, offset, refusal) in table {
            let d = await send(g2, command, at: offset)
            XCTAssertEqual(d.refusal, refusal, "\(AuditCommand(command)) at \(offset)")
        }
        // Other sites are independent.
        do { let value = await g2.authorize(.bolus(units: 5), site: "https://other.example", now: t0 + 4200).ticket; XCTAssertNotNil(value) }
    }

    func testCorruptHistoryAmountsBlockTheHour() async throws {
        let bad = (0..<6).map { i in
            AuditEntry(
                ticketID: UUID(), time: t0 + Double(i), site: site, command: AuditCommand(.bolus(units: [.nan, .infinity, -1][i % 3])),
                source: "old.lua", verdict: .allowed, phase: .attempted, detail: "")
        }
        let (g, _) = try makeGuard(limits(), log: InMemoryAuditLog(entries: bad))
        let d = await g.authorize(.bolus(units: 0.01), site: site, now: t0 + 60)
        XCTAssertEqual(d.refusal?.code, "exceedsHourlyTotal")
        let c = await g.authorize(.carbs(grams: 1), site: site, now: t0 + 60)
        XCTAssertNotNil(c.ticket)
        let later = await g.authorize(.bolus(units: 1), site: site, now: t0 + 3606)
        XCTAssertNotNil(later.ticket)
    }

    func testUnreadableLedgerRefusesThenRetries() async throws {
        let log = InMemoryAuditLog()
        let g = try RemoteCommandGuard(limits: limits(), ledger: FlakyLedger(inner: log))
        let d = await g.authorize(.bolus(units: 1), site: site, now: t0)
        XCTAssertEqual(d.refusal?.code, "historyUnavailable")
        do { let value = await log.entries.last?.reasonCode; XCTAssertEqual(value, "historyUnavailable") }
        do { let value = await g.authorize(.bolus(units: 1), site: site, now: t0 + 1).ticket; XCTAssertNotNil(value) }
    }

    func testUnwritableLedgerRefusesAndReservesNothing() async throws {
        let audit = BrokenLedger()
        let g = try RemoteCommandGuard(limits: limits(bolusHour: 1), ledger: audit)
        let d = await g.authorize(.bolus(units: 1), site: site, now: t0)
        XCTAssertEqual(d.refusal?.code, "historyUnavailable")
        do { let value = await g.lastAuditError; XCTAssertNotNil(value) }
        await audit.heal()
        do { let value = await g.authorize(.bolus(units: 1), site: site, now: t0 + 1).ticket; XCTAssertNotNil(value) }
    }

    // MARK: - Adversarial script

    /// A script hammering the guard from concurrent tasks with loops, changed amounts, numbers
    /// parsed from strings, and garbage. A fake simulator records what is sent; the rolling
    /// totals never exceed the limits, and every refusal is audited exactly once.
    func testAdversarialScriptNeverExceedsLimits() async throws {
        let l = limits(bolus: 2, carbs: 30, bolusHour: 5, carbsHour: 60, interval: 30, overrides: ["Exercise"], duplicate: 300)
        let (g, log) = try makeGuard(l)
        let simulator = FakeSimulator()
        let strings = ["2", " 2.0", "2.01", "1e1", "0x10", "-0", "nan", "inf", "1e-300", "0.333", "5", "1.99"]
        let values: [Double] = [2, 2.01, 1.999, 0.5, 0.51, 1, 1, 30, 30.01, -1, 0, .nan, .infinity, 1e-300, 100]
            + strings.compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        let names = ["Exercise", "exercise", "Exercise ", "Pre-Meal", ""]
        // Time advances in steps of 7 s over ~3 hours; each step 4 concurrent tasks.
        var allDecisions: [RemoteCommandDecision] = []
        let site = site
        var rng = LCG(seed: 42)
        for step in 0..<1500 {
            let now = t0 + Double(step) * 7
            let commands: [LoopCommand] = (0..<4).map { _ in
                switch rng.next() % 4 {
                case 0: return .bolus(units: values[Int(rng.next() % UInt64(values.count))])
                case 1: return .carbs(grams: values[Int(rng.next() % UInt64(values.count))] * 10)
                case 2: return .override(name: names[Int(rng.next() % UInt64(names.count))], durationMinutes: 30)
                default: return .cancelOverride
                }
            }
            let failing = rng.next() % 5 == 0
            let decisions = await withTaskGroup(of: RemoteCommandDecision.self) { group in
                for c in commands {
                    group.addTask {
                        let d = await g.authorize(c, site: site, source: "evil.lua", now: now)
                        if let t = d.ticket {
                            let outcome = await simulator.deliver(t.command, at: now, failing: failing)
                            await g.complete(t, outcome: outcome, now: now)
                        }
                        return d
                    }
                }
                var out: [RemoteCommandDecision] = []
                for await d in group { out.append(d) }
                return out
            }
            allDecisions += decisions
        }
        let delivered = await simulator.delivered
        XCTAssertGreaterThan(delivered.count, 10, "the test should exercise allowed sends too")
        for (i, a) in delivered.enumerated() {
            switch a.command {
            case .bolus(let u): XCTAssertLessThanOrEqual(u, 2)
            case .carbs(let g, _, _): XCTAssertLessThanOrEqual(g, 30)
            case .override(let name, _): XCTAssertEqual(name, "Exercise")
            case .cancelOverride: break
            case .closedLoop, .autobolus: XCTFail("no toggle was asked for")
            }
            if i > 0 { XCTAssertGreaterThanOrEqual(a.time.timeIntervalSince(delivered[i - 1].time), 30) }
            let window = delivered.filter { $0.time <= a.time && a.time.timeIntervalSince($0.time) < 3600 }
            let bolus = window.reduce(0.0) { if case .bolus(let u) = $1.command { return $0 + u } else { return $0 } }
            let carbs = window.reduce(0.0) { if case .carbs(let g, _, _) = $1.command { return $0 + g } else { return $0 } }
            XCTAssertLessThanOrEqual(bolus, 5 + 1e-9)
            XCTAssertLessThanOrEqual(carbs, 60 + 1e-9)
        }
        let refusals = allDecisions.compactMap(\.refusal)
        let refusedEntries = await log.entries.filter { $0.verdict == .refused }
        XCTAssertEqual(refusedEntries.count, refusals.count)
        XCTAssertEqual(Set(refusedEntries.map(\.id)).count, refusedEntries.count)
        XCTAssertEqual(refusedEntries.compactMap(\.reason).sorted(), refusals.map(\.description).sorted())
        XCTAssertEqual(refusedEntries.compactMap(\.reasonCode).sorted(), refusals.map(\.code).sorted())
        let attempted = await log.entries.filter { $0.phase == .attempted }.count
        XCTAssertEqual(attempted, allDecisions.count - refusals.count)
    }

    // MARK: - Audit entries

    func testAuditEntriesEncodeNonFiniteAmounts() throws {
        let entry = AuditEntry(
            ticketID: nil, time: t0, site: site, command: AuditCommand(.carbs(grams: .nan, absorptionHours: .infinity)),
            source: "evil.lua", verdict: .refused, reasonCode: "notFinite", reason: "grams is not a finite number",
            phase: .refused, detail: "carbs nan g")
        let data = try JSONEncoder().encode(entry)
        XCTAssertTrue(String(decoding: data, as: UTF8.self).contains(#""amount":"nan""#))
        let back = try JSONDecoder().decode(AuditEntry.self, from: data)
        XCTAssertTrue(back.command.amount?.isNaN == true)
        XCTAssertEqual(back.command.absorptionHours, .infinity)
        XCTAssertEqual(back.reason, entry.reason)
        let phase = try JSONEncoder().encode([AuditPhase.dryRun])
        XCTAssertEqual(String(decoding: phase, as: UTF8.self), #"["dry-run"]"#)
        // Descriptions never trap (LoopCommand.description does on NaN, infinity and huge values).
        XCTAssertEqual(AuditCommand(.bolus(units: .nan)).description, "bolus nan U")
        XCTAssertEqual(AuditCommand(.bolus(units: 1e300)).description, "bolus 1e+300 U")
        XCTAssertEqual(AuditCommand(.bolus(units: 0.1 + 0.2)).description, "bolus 0.3 U")
        XCTAssertEqual(AuditCommand(.carbs(grams: -.infinity, absorptionHours: 3)).description, "carbs -inf g over 3 h")
        XCTAssertEqual(AuditCommand(.override(name: "Exercise", durationMinutes: 60)).loopCommand,
                       .override(name: "Exercise", durationMinutes: 60))
    }

    func testRefusalTexts() {
        let table: [(RemoteCommandRefusal, String)] = [
            (.exceedsHourlyTotal(amount: 1.5, sentInHour: 4, limit: 5),
             "1.5 more would make 5.5 in the last hour (already 4, limit 5)"),
            (.exceedsMaximum(amount: 2.01, limit: 2), "amount 2.01 is above the maximum of 2 per command"),
            (.tooSoon(wait: 12.34), "too soon after the previous command: wait 12.4 s"),
            (.overrideNotAllowed(name: "x", allowed: []), "override \"x\" is not allowed (allowed: none)"),
            (.amountNotPositive(amount: -1), "amount -1 is not positive"),
            (.tooPrecise(amount: 1e-300, step: 0.01), "amount 1e-300 is not a positive multiple of 0.01"),
            (.notFinite(field: "units"), "units is not a finite number"),
            (.invalidParameter(field: "absorptionHours", value: 1e300), "absorptionHours 1e+300 is out of range"),
            (.dryRun(wouldSend: .carbs(grams: 20, absorptionHours: 3)), "dry run: would send carbs 20 g over 3 h"),
        ]
        for (refusal, text) in table { XCTAssertEqual(refusal.description, text) }
    }
}

// MARK: - Test doubles

/// Records what reaches the "simulator".
private actor FakeSimulator {
    struct Delivery { var command: LoopCommand; var time: Date }
    private(set) var delivered: [Delivery] = []

    func deliver(_ command: LoopCommand, at time: Date, failing: Bool) -> RemoteCommandOutcome {
        if failing { return .failed(detail: "declined at the terminal") }
        delivered.append(Delivery(command: command, time: time))
        return .sent(detail: "OK")
    }
}

/// Fails its first reservation.
private actor FlakyLedger: RemoteCommandLedger {
    let inner: InMemoryAuditLog
    private var failed = false
    struct Unavailable: Error {}
    init(inner: InMemoryAuditLog) { self.inner = inner }
    func append(_ entry: AuditEntry) async throws { try await inner.append(entry) }
    func reserve<T: Sendable>(site: String, keys: [String], window: TimeInterval, now given: Date?,
                              _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)) async throws -> T {
        if !failed { failed = true; throw Unavailable() }
        return try await inner.reserve(site: site, keys: keys, window: window, now: given, decide)
    }
    func claimOneTimeCode(_ code: String, counter: UInt64, pumps: [String], now: Date) async throws -> Bool {
        await inner.claimOneTimeCode(code, counter: counter, pumps: pumps, now: now)
    }
}

/// Refuses everything until healed.
private actor BrokenLedger: RemoteCommandLedger {
    private var broken = true
    private let inner = InMemoryAuditLog()
    struct DiskFull: Error {}
    func heal() { broken = false }
    func append(_ entry: AuditEntry) async throws { if broken { throw DiskFull() } }
    func reserve<T: Sendable>(site: String, keys: [String], window: TimeInterval, now given: Date?,
                              _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)) async throws -> T {
        if broken { throw DiskFull() }
        return try await inner.reserve(site: site, keys: keys, window: window, now: given, decide)
    }
    func claimOneTimeCode(_ code: String, counter: UInt64, pumps: [String], now: Date) async throws -> Bool {
        if broken { throw DiskFull() }
        return await inner.claimOneTimeCode(code, counter: counter, pumps: pumps, now: now)
    }
}

/// A deterministic pseudo-random generator.
private struct LCG {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }
}
