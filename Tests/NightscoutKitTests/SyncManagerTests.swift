import Foundation
import LookoutSim
import XCTest
@testable import NightscoutKit

/// Collects values from a `@Sendable` callback.
private final class Collector<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    func append(_ item: T) { lock.withLock { items.append(item) } }
    var values: [T] { lock.withLock { items } }
}

/// A store that fails its `failOnApply`-th `apply` (1-based), delegating everything else.
private actor FailingStore: SyncStore {
    struct Injected: Error {}
    let inner: InMemorySyncStore
    let failOnApply: Int
    private var applies = 0
    init(_ inner: InMemorySyncStore, failOnApply: Int) { self.inner = inner; self.failOnApply = failOnApply }

    func cursor(site: String, collection: V3Collection) async throws -> HistoryCursor? {
        try await inner.cursor(site: site, collection: collection)
    }
    func apply(site: String, collection: V3Collection, documents: [MirrorDocument], cursor: HistoryCursor?) async throws {
        applies += 1
        if applies == failOnApply { throw Injected() }
        try await inner.apply(site: site, collection: collection, documents: documents, cursor: cursor)
    }
    func states(site: String, collection: V3Collection, identifiers: [String]) async throws -> [String: MirrorState] {
        try await inner.states(site: site, collection: collection, identifiers: identifiers)
    }
    func identifiers(site: String, collection: V3Collection, from: Int64?, through: Int64?) async throws -> Set<String> {
        try await inner.identifiers(site: site, collection: collection, from: from, through: through)
    }
    func documents(site: String, collection: V3Collection, from: Int64?, through: Int64?, limit: Int?,
                   includeDeleted: Bool) async throws -> [Data] {
        try await inner.documents(site: site, collection: collection, from: from, through: through, limit: limit,
                                  includeDeleted: includeDeleted)
    }
}

final class SyncManagerTests: XCTestCase {
    let h = ClientSimHarness.shared

    /// A store whose treatments cursor starts just after the simulator's current time, so history
    /// holds only documents written by the calling test (other tests share the simulator).
    private func freshStore(site: String, collection: V3Collection = .treatments) async throws -> InMemorySyncStore {
        h.clock.advance(by: 1)
        let store = InMemorySyncStore()
        let now = NightscoutDate(h.clock.now()).epochMilliseconds
        try await store.apply(site: site, collection: collection, documents: [], cursor: HistoryCursor(watermark: now))
        return store
    }

    /// Creates `count` v3 treatments of `device`, each one simulated millisecond apart.
    private func createNotes(_ client: NightscoutClient, device: String, count: Int, at offset: TimeInterval) async throws -> [String] {
        var ids: [String] = []
        for i in 0..<count {
            h.clock.advance(by: 0.001)
            let doc = Treatment(common: CommonFields(date: NightscoutDate(epochMilliseconds: simMillis(offset + Double(i))),
                                                     app: "kit-sync-tests", device: device),
                                eventType: EventType(rawValue: "Note"), notes: "note \(i)")
            ids.append(try await client.create(.treatments, doc).identifier)
        }
        return ids
    }

    func testSyncAddsThenReportsNothingThenUpdateThenDelete() async throws {
        let client = try await h.tokenClient()
        let store = try await freshStore(site: client.configuration.syncSiteKey)
        let manager = try SyncManager(client: client, store: store, pageLimit: 3)
        let ids = try await createNotes(client, device: "kit-sync-basic", count: 7, at: -3_000)
        let mine = Set(ids)

        let first = try await manager.sync(.treatments)
        XCTAssertEqual(first.added.filter(mine.contains), ids, "added in history order")
        XCTAssertGreaterThanOrEqual(first.pages, 3)
        XCTAssertEqual(first.added.count + first.updated.count + first.deleted.count + first.unchanged, first.documents)
        let storedCursor = try await store.cursor(site: manager.site, collection: .treatments)
        XCTAssertEqual(first.cursor, storedCursor)

        // Mirror query: newest first, raw server JSON.
        let range = (from: Date(timeIntervalSince1970: Double(simMillis(-3_000)) / 1000),
                     through: Date(timeIntervalSince1970: Double(simMillis(-2_990)) / 1000))
        let mirrored = try await manager.mirror(.treatments, from: range.from, through: range.through)
        let mirroredIDs = try mirrored.map { try XCTUnwrap(MirrorDocument(json: $0)).identifier }
        XCTAssertEqual(mirroredIDs, ids.reversed())
        let two = try await manager.mirror(.treatments, from: range.from, through: range.through, limit: 2)
        XCTAssertEqual(two.count, 2)
        let direct = try await store.documents(site: manager.site, collection: .treatments,
                                               from: simMillis(-3_000), through: simMillis(-2_990), limit: 2)
        XCTAssertEqual(direct, two)
        let object = try JSONSerialization.jsonObject(with: mirrored[0]) as? [String: Any]
        XCTAssertEqual(object?["device"] as? String, "kit-sync-basic")

        let second = try await manager.sync(.treatments)
        XCTAssertTrue(second.isEmpty, "nothing new: \(second)")
        XCTAssertEqual(second.added, [])
        XCTAssertEqual(second.cursor, first.cursor)

        h.clock.advance(by: 1)
        try await client.patch(.treatments, identifier: ids[2], fields: ["notes": .string("patched")])
        let third = try await manager.sync(.treatments)
        XCTAssertEqual(third.updated.filter(mine.contains), [ids[2]])
        XCTAssertEqual(third.added.filter(mine.contains), [])
        let patched = try await manager.mirror(.treatments, from: range.from, through: range.through)
            .compactMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            .first { $0["identifier"] as? String == ids[2] }
        XCTAssertEqual(patched?["notes"] as? String, "patched")

        h.clock.advance(by: 1)
        try await client.delete(.treatments, identifier: ids[4])
        let fourth = try await manager.sync(.treatments)
        XCTAssertEqual(fourth.deleted.filter(mine.contains), [ids[4]])
        XCTAssertEqual(fourth.updated.filter(mine.contains), [])
        let live = try await manager.mirror(.treatments, from: range.from, through: range.through)
        XCTAssertEqual(live.count, 6, "deleted documents are excluded by default")
        let withTombstones = try await manager.mirror(.treatments, from: range.from, through: range.through, includeDeleted: true)
        XCTAssertEqual(withTombstones.count, 7)
        let states = try await store.states(site: manager.site, collection: .treatments, identifiers: [ids[4]])
        XCTAssertEqual(states[ids[4]]?.isValid, false)

        let fifth = try await manager.sync(.treatments)
        XCTAssertTrue(fifth.isEmpty)
    }

    func testSyncInterruptedByStoreFailureResumesWithoutGapsOrRepeats() async throws {
        let client = try await h.tokenClient()
        let inner = try await freshStore(site: client.configuration.syncSiteKey)
        let ids = try await createNotes(client, device: "kit-sync-fail", count: 9, at: -4_000)
        let mine = Set(ids)

        let failing = try SyncManager(client: client, store: FailingStore(inner, failOnApply: 2), pageLimit: 3)
        do {
            _ = try await failing.sync(.treatments)
            XCTFail("expected the injected failure")
        } catch is FailingStore.Injected {}
        let site = client.configuration.syncSiteKey
        let stored = await inner.allDocuments(site: site, collection: .treatments).map(\.identifier).filter(mine.contains)
        XCTAssertEqual(Set(stored), Set(ids.prefix(3)), "only the first page was stored")

        let resumed = try await SyncManager(client: client, store: inner, pageLimit: 3).sync(.treatments)
        let rest = resumed.added.filter(mine.contains)
        XCTAssertEqual(rest, Array(ids.dropFirst(3)), "no gaps")
        XCTAssertTrue(Set(rest).isDisjoint(with: stored), "no repeats")
        XCTAssertEqual(resumed.updated.filter(mine.contains), [])
        XCTAssertEqual(resumed.unchanged, 0)
    }

    func testSyncCancelledFromProgressStopsAfterWholePageAndResumes() async throws {
        let client = try await h.tokenClient()
        let store = try await freshStore(site: client.configuration.syncSiteKey)
        let ids = try await createNotes(client, device: "kit-sync-cancel", count: 8, at: -5_000)
        let mine = Set(ids)
        let manager = try SyncManager(client: client, store: store, pageLimit: 3)

        let task = Task {
            try await manager.sync(.treatments) { progress in
                if progress.pages == 1 { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        do {
            _ = try await task.value
            XCTFail("expected CancellationError")
        } catch is CancellationError {}
        let stored = await store.allDocuments(site: manager.site, collection: .treatments).map(\.identifier).filter(mine.contains)
        XCTAssertEqual(Set(stored), Set(ids.prefix(3)))

        let resumed = try await manager.sync(.treatments)
        XCTAssertEqual(resumed.added.filter(mine.contains), Array(ids.dropFirst(3)))
        let all = await store.allDocuments(site: manager.site, collection: .treatments).map(\.identifier).filter(mine.contains)
        XCTAssertEqual(Set(all), mine)
    }

    func testProgressReportsPagesDocumentsRateAndWatermark() async throws {
        let client = try await h.tokenClient()
        let store = try await freshStore(site: client.configuration.syncSiteKey)
        _ = try await createNotes(client, device: "kit-sync-progress", count: 7, at: -6_000)
        let manager = try SyncManager(client: client, store: store, pageLimit: 2)
        let seen = Collector<SyncProgress>()
        let report = try await manager.sync(.treatments) { seen.append($0) }
        let snapshots = seen.values
        XCTAssertEqual(snapshots.map(\.pages), Array(1...report.pages))
        XCTAssertGreaterThanOrEqual(report.pages, 4)
        XCTAssertEqual(snapshots.last?.documents, report.documents)
        XCTAssertGreaterThanOrEqual(report.documents, 7)
        XCTAssertEqual(snapshots.map(\.documents), snapshots.map(\.documents).sorted())
        let marks = snapshots.compactMap(\.watermark)
        XCTAssertEqual(marks.count, snapshots.count)
        XCTAssertEqual(marks, marks.sorted())
        XCTAssertEqual(snapshots.last?.cursor, report.cursor)
        XCTAssertTrue(snapshots.allSatisfy { $0.phase == .history && $0.collection == .treatments && $0.documentsPerSecond >= 0 })
        XCTAssertGreaterThan(snapshots.last?.documentsPerSecond ?? 0, 0)
    }

    /// Posts three notes through API v1 (no `srvModified`, so history never shows them), a minute
    /// apart from `offset` + 100 s; returns their `_id`s.
    private func postV1Notes(_ v1: NightscoutClient, device: String, at offset: TimeInterval) async throws -> [String] {
        var ids: [String] = []
        for i in 0..<3 {
            let at = NightscoutDate(epochMilliseconds: simMillis(offset + 100 + Double(i) * 60)).isoString
            let body = try JSONSerialization.data(withJSONObject: [
                "eventType": "Note", "created_at": at, "device": device, "notes": "v1 \(i)"])
            let answer = try await v1.v1JSON("POST", "/treatments", body: body)
            let stored = try XCTUnwrap(try JSONSerialization.jsonObject(with: answer) as? [[String: Any]])
            ids.append(try XCTUnwrap(stored.first?["_id"] as? String))
        }
        return ids
    }

    func testFullSyncFindsV1DocumentsHistoryNeverShowsAndReportsMissingOnServer() async throws {
        let client = try await h.tokenClient()
        let v1 = try await h.secretClient()
        // A date range of our own, 30 days before the harness start.
        let base: TimeInterval = -30 * 86_400
        let from = Date(timeIntervalSince1970: Double(simMillis(base - 60)) / 1000)
        let through = Date(timeIntervalSince1970: Double(simMillis(base + 3_600)) / 1000)
        let store = try await freshStore(site: client.configuration.syncSiteKey)

        let v3IDs = try await createNotes(client, device: "kit-sync-full", count: 2, at: base)
        let v1IDs = try await postV1Notes(v1, device: "kit-sync-full-v1", at: base)
        let all = Set(v3IDs + v1IDs)

        let manager = try SyncManager(client: client, store: store, pageLimit: 2)
        let history = try await manager.sync(.treatments)
        XCTAssertEqual(history.added.filter(all.contains), v3IDs, "history shows only the v3 writes")

        let progress = Collector<SyncProgress>()
        let full = try await manager.fullSync(.treatments, from: from, through: through) { progress.append($0) }
        XCTAssertEqual(full.reconciledWith, .v3)
        XCTAssertEqual(Set(full.missedByHistory.filter(all.contains)), Set(v1IDs))
        XCTAssertEqual(Set(full.added.filter(all.contains)), Set(v1IDs))
        XCTAssertEqual(full.missingOnServer.filter(all.contains), [])
        XCTAssertGreaterThanOrEqual(full.unchanged, 2, "the v3 documents were already mirrored")
        XCTAssertTrue(progress.values.contains { $0.phase == .reconciliation })
        let mirrored = try await manager.mirror(.treatments, from: from, through: through)
        XCTAssertEqual(Set(try mirrored.compactMap { try MirrorDocument(json: $0)?.identifier }).intersection(all), all)

        // Again: nothing missed; a permanently deleted document is reported, not removed.
        h.clock.advance(by: 1)
        try await client.delete(.treatments, identifier: v3IDs[1], permanent: true)
        let again = try await manager.fullSync(.treatments, from: from, through: through)
        XCTAssertEqual(again.missedByHistory.filter(all.contains), [])
        XCTAssertEqual(again.added.filter(all.contains), [])
        XCTAssertEqual(again.missingOnServer.filter(all.contains), [v3IDs[1]])
        let still = try await manager.mirror(.treatments, from: from, through: through).count
        XCTAssertEqual(still, mirrored.count)

        // A client on API v1 reconciles through v1 reads (with pages overlapping at the boundary).
        let v1Store = InMemorySyncStore()
        let v1Manager = try SyncManager(client: v1, store: v1Store, pageLimit: 2)
        let viaV1 = try await v1Manager.fullSync(.treatments, from: from, through: through)
        XCTAssertEqual(viaV1.reconciledWith, .v1)
        XCTAssertNil(viaV1.cursor)
        XCTAssertEqual(Set(viaV1.added.filter(all.contains)), all.subtracting([v3IDs[1]]))
        XCTAssertEqual(viaV1.added.count, Set(viaV1.added).count, "no repeats across overlapping pages")
        XCTAssertGreaterThanOrEqual(viaV1.pages, 2)
        do {
            _ = try await v1Manager.sync(.treatments)
            XCTFail("history needs API v3")
        } catch NightscoutError.unsupportedCredentials {}
    }

    /// Full syncs of one site through v1 (secret) and v3 (token) into one mirror: a document
    /// written through v1 has no `srvModified` in v1 answers and a stand-in in v3 answers; the
    /// mirror keeps one form, so switching reports nothing updated when nothing changed.
    func testFullSyncsThroughV1AndV3IntoOneMirrorReportNothingUpdatedOnASwitch() async throws {
        let client = try await h.tokenClient()
        let v1 = try await h.secretClient()
        XCTAssertEqual(client.configuration.syncSiteKey, v1.configuration.syncSiteKey)
        let base: TimeInterval = -40 * 86_400
        let from = Date(timeIntervalSince1970: Double(simMillis(base - 60)) / 1000)
        let through = Date(timeIntervalSince1970: Double(simMillis(base + 3_600)) / 1000)
        let v3IDs = try await createNotes(client, device: "kit-sync-switch", count: 2, at: base)
        let v1IDs = try await postV1Notes(v1, device: "kit-sync-switch-v1", at: base)
        let all = Set(v3IDs + v1IDs)
        let store = InMemorySyncStore()
        let viaV3 = try SyncManager(client: client, store: store, pageLimit: 2)
        let viaV1 = try SyncManager(client: v1, store: store, pageLimit: 2)
        let first = try await viaV3.fullSync(.treatments, from: from, through: through)
        XCTAssertEqual(Set(first.added.filter(all.contains)), all)
        for (name, manager) in [("v1", viaV1), ("v3", viaV3), ("v1 again", viaV1)] {
            let report = try await manager.fullSync(.treatments, from: from, through: through)
            XCTAssertEqual(report.updated.filter(all.contains), [], name)
            XCTAssertEqual(report.added.filter(all.contains), [], name)
            XCTAssertGreaterThanOrEqual(report.unchanged, all.count, name)
        }
    }

    func testSiteKeyDropsCredentialsQueryDefaultPortAndCase() throws {
        let a = try NightscoutConfiguration(siteURL: URL(string: "HTTPS://user:pw@My.Site.Example:443/ns/?token=x")!)
        XCTAssertEqual(a.syncSiteKey, "https://my.site.example/ns")
        let b = try NightscoutConfiguration(site: "my.site.example", credentials: .apiSecret("abcdefghijklmnop"))
        XCTAssertEqual(b.syncSiteKey, "https://my.site.example")
        let c = try NightscoutConfiguration(siteURL: URL(string: "http://127.0.0.1:8080")!)
        XCTAssertEqual(c.syncSiteKey, "http://127.0.0.1:8080")
    }

    func testSplitKeepsRawBytesAndIndexesFields() throws {
        let docs: [String] = [
            #"{"identifier":"a","date":1714557600000,"srvModified":1714557600500,"sgv":120,"nested":{"x":[1,{"y":"}"}]}}"#,
            #"{"_id":"65f0c0ffee0000000000abcd","created_at":"2024-05-01T10:00:01.000Z","notes":"quote \" and \\ and ünï"}"#,
            #"{"identifier":"c","dateString":"2024-05-01T12:00:02+02:00","isValid":false,"srvModified":5}"#,
            #"{"notes":"no key"}"#,
            #"{"identifier":"e\u0041","date":1.7145576e12,"isValid":true}"#,
        ]
        let body = Data(("{\"status\":200, \"result\" : [ " + docs.joined(separator: " ,\n") + " ] }").utf8)
        let split = try MirrorDocument.split(v3Envelope: body)
        XCTAssertEqual(split.map(\.identifier), ["a", "65f0c0ffee0000000000abcd", "c", "eA"])
        XCTAssertEqual(split.map { String(decoding: $0.raw, as: UTF8.self) }, [docs[0], docs[1], docs[2], docs[4]])
        XCTAssertEqual(split.map(\.date), [1_714_557_600_000, 1_714_557_601_000, 1_714_557_602_000, 1_714_557_600_000])
        XCTAssertEqual(split.map(\.srvModified), [1_714_557_600_500, nil, 5, nil])
        XCTAssertEqual(split.map(\.isValid), [true, true, false, true])
        XCTAssertEqual(try MirrorDocument.split(jsonArray: Data("[]".utf8)), [])
        XCTAssertEqual(try MirrorDocument.split(v3Envelope: Data(#"{"status":200,"result":[]}"#.utf8)), [])
        XCTAssertThrowsError(try MirrorDocument.split(v3Envelope: Data(#"{"status":200,"result":[{"identifier":"x""#.utf8)))
        XCTAssertThrowsError(try MirrorDocument.split(v3Envelope: Data(#"{"status":401,"message":"no"}"#.utf8)))
    }

    /// A 10,000-document v3 page splits into documents with their identifiers, dates and exact
    /// raw bytes (the speed of this is measured in `lookout-bench P9`, not asserted here).
    func testSplitAndIndex10kDocuments() throws {
        var parts: [String] = []
        for i in 0..<10_000 {
            let ms = 1_714_557_600_000 + Int64(i) * 300_000
            parts.append(#"{"type":"sgv","sgv":\#(100 + i % 80),"direction":"Flat","device":"xDrip-DexcomG6","#
                + #""date":\#(ms),"dateString":"\#(NightscoutDate(epochMilliseconds: ms).isoString)","#
                + #""utcOffset":0,"app":"xDrip","identifier":"id-\#(i)","srvModified":\#(ms + 1000),"#
                + #""srvCreated":\#(ms + 1000),"subject":"uploader","noise":1,"filtered":120000,"unfiltered":118000}"#)
        }
        let body = Data(("{\"status\":200,\"result\":[" + parts.joined(separator: ",") + "]}").utf8)
        let split = try MirrorDocument.split(v3Envelope: body)
        XCTAssertEqual(split.count, 10_000)
        XCTAssertEqual(split[9_999].identifier, "id-9999")
        XCTAssertEqual(split[9_999].date, 1_714_557_600_000 + 9_999 * 300_000)
        XCTAssertEqual(String(decoding: split[123].raw, as: UTF8.self), parts[123])

        XCTAssertEqual(Set(split.map(\.identifier)).count, 10_000, "every document indexed under its own identifier")
    }
}
