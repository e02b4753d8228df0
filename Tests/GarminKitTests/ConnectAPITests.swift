import Foundation
import LookoutWire
import GarminKit
import LookoutSim
import XCTest

/// Connect API: typed helpers, generic methods, 204, errors, retry rules.
final class ConnectAPITests: XCTestCase {
    func testTypedHelpers() async throws {
        let (_, url) = try await GarminSims.shared.sim("main")
        let c = try await GarminTest.loggedIn(url)
        let today = GarminTest.today(), yesterday = today.adding(days: -1), future = today.adding(days: 3)

        let profile = try await c.profile()
        XCTAssertEqual(profile?.userName, "runner")
        let summary = try await c.dailySummary(date: yesterday)
        XCTAssertEqual(summary?.calendarDate, yesterday.text)
        XCTAssertGreaterThan(summary?.totalSteps ?? 0, 1000)
        let hr = try await c.heartRate(date: yesterday)
        XCTAssertEqual(hr?.heartRateValues?.count, 720)
        XCTAssertNotNil(hr?.restingHeartRate)
        let sleep = try await c.sleep(date: yesterday)
        XCTAssertGreaterThan(sleep?.dailySleepDTO?.sleepTimeSeconds ?? 0, 3600)
        let noSleep = try await c.sleep(date: future)
        XCTAssertNil(noSleep, "a null dailySleepDTO.id means no data")
        let stress = try await c.stress(date: yesterday)
        XCTAssertEqual(stress?.stressValuesArray?.count, 480)
        let noStress = try await c.stress(date: future)
        XCTAssertNil(noStress, "JSON null means no data")
        let bb = try await c.bodyBattery(date: yesterday)
        XCTAssertEqual(bb.first?.event?.eventType, "SLEEP")
        let steps = try await c.steps(from: yesterday.adding(days: -6), to: yesterday)
        XCTAssertEqual(steps.count, 7)
        XCTAssertEqual(steps.last?.calendarDate, yesterday.text)
        let long = try await c.steps(from: yesterday.adding(days: -59), to: yesterday)
        XCTAssertEqual(long.count, 60, "three pages of at most 28 days")
        XCTAssertEqual(long.first?.calendarDate, yesterday.adding(days: -59).text)
        XCTAssertEqual(Set(long.map(\.calendarDate)).count, 60)
        let pastToday = try await c.steps(from: yesterday, to: today.adding(days: 5))
        XCTAssertEqual(pastToday.map(\.calendarDate), [yesterday.text, today.text], "future days have no data")
        let emptyNewest = try await c.steps(from: yesterday, to: today.adding(days: 40))
        XCTAssertEqual(emptyNewest, [], "an empty newest page stops paging, as in garth")
        XCTAssertEqual(GarminDate(Date(timeIntervalSince1970: 0)).days(to: try GarminDate("1970-01-29")), 28)
        let hrv = try await c.hrv(date: yesterday)
        XCTAssertNotNil(hrv?.hrvSummary?.lastNightAvg)
        let noHRV = try await c.hrv(date: future)
        XCTAssertNil(noHRV, "204 means no data")
        let weight = try await c.weight(date: yesterday)
        XCTAssertNotNil(weight?.dateWeightList)
        let acts = try await c.activities(limit: 5, start: 2)
        XCTAssertEqual(acts.count, 5)
        let all = try await c.activities(limit: 100)
        XCTAssertEqual(all.count, 60)
        XCTAssertEqual(acts.first?.activityId, all[2].activityId)
    }

    func testGenericMethodsAndActivityEditing() async throws {
        let (_, url) = try await GarminSims.shared.sim("edit")
        let c = try await GarminTest.loggedIn(url)
        let first = try await c.activities(limit: 1)[0]
        let path = "/activity-service/activity/\(first.activityId)"
        let got = try await c.get(path)
        XCTAssertEqual(got?["activityId"]?.int64Value, first.activityId)
        let put = try await c.put(path, json: .object(["activityId": .int(first.activityId), "activityName": .string("Renamed")]))
        XCTAssertNil(put, "204 gives nil")
        let renamed = try await c.get(path)
        XCTAssertEqual(renamed?["activityName"]?.stringValue, "Renamed")
        let deleted = try await c.delete(path)
        XCTAssertNil(deleted)
        do {
            _ = try await c.get(path)
            XCTFail("expected 404 after delete")
        } catch let e as GarminError {
            XCTAssertEqual(e.status, 404)
            XCTAssertTrue("\(e)".contains("/activity-service/activity/"), "\(e)")
        }
        let raw = try await c.json(.heartRate(GarminTest.today().adding(days: -2)))
        XCTAssertNotNil(raw?["heartRateValues"]?.arrayValue)
        await assertGarminError(.invalidConfiguration("API path must start with /: nope")) { try await c.get("nope") }
        XCTAssertThrowsError(try GarminDate("2026-13-01"))
        XCTAssertThrowsError(try GarminDate("yesterday"))
    }

    func testRateLimitIsNotRetriedAndCarriesTheDelay() async throws {
        let (sim, url) = try await GarminSims.shared.sim("faults")
        let c = try await GarminTest.loggedIn(url)
        await sim.injectFault(status: 429, pathPrefix: "/userprofile-service", count: 1, retryAfter: 42)
        let before = await sim.counters()
        await assertGarminError(.rateLimited(retryAfter: 42)) { try await c.profile() }
        let after = await sim.counters()
        XCTAssertEqual(after.injectedFaults - before.injectedFaults, 1, "one request, no retry")
        XCTAssertEqual(GarminError.rateLimited(retryAfter: 42).retryAfter, 42)
        let profileAgain = try await c.profile()
        XCTAssertNotNil(profileAgain)
    }

    func testIdempotentRequestsRetryOn5xxButPostDoesNot() async throws {
        let (sim, url) = try await GarminSims.shared.sim("faults")
        let c = try await GarminTest.loggedIn(url)
        // GET: 503 twice, then success (3 faults + 1 real answer).
        await sim.injectFault(status: 503, pathPrefix: "/userprofile-service/socialProfile", count: 2)
        var before = await sim.counters()
        let profileAgain = try await c.profile()
        XCTAssertNotNil(profileAgain)
        var after = await sim.counters()
        XCTAssertEqual(after.injectedFaults - before.injectedFaults, 2)
        XCTAssertEqual(after.apiRequests - before.apiRequests, 1)
        // GET: 4 failures exhaust 3 retries.
        await sim.injectFault(status: 502, pathPrefix: "/userprofile-service/socialProfile", count: 5)
        before = await sim.counters()
        do {
            _ = try await c.profile()
            XCTFail("expected 502")
        } catch let e as GarminError {
            XCTAssertEqual(e.status, 502)
        }
        after = await sim.counters()
        XCTAssertEqual(after.injectedFaults - before.injectedFaults, 4, "1 attempt + 3 retries")
        await sim.injectFault(status: 502, pathPrefix: "/userprofile-service/socialProfile", count: 1)  // drain the rest
        _ = try? await c.profile()
        // POST: never retried.
        await sim.injectFault(status: 503, pathPrefix: "/activity-service", count: 2)
        before = await sim.counters()
        do {
            _ = try await c.post("/activity-service/activity", json: .object([:]))
            XCTFail("expected 503")
        } catch let e as GarminError {
            XCTAssertEqual(e.status, 503)
        }
        after = await sim.counters()
        XCTAssertEqual(after.injectedFaults - before.injectedFaults, 1, "POST sent once")
        _ = try? await c.post("/activity-service/activity", json: .object([:]))  // drain the second fault
    }
}
