import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import NightscoutKit
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutStore
import LookoutWire

/// `home:sync`, `home:full_sync` and `home:mirror` against the shared simulator, with the mirror
/// in the state database.
final class NightscoutSyncTests: XCTestCase {
    private var site: NightscoutModuleSim.Running!

    override func setUp() async throws {
        site = try await NightscoutModuleSim.shared.start()
    }

    /// Runs `source` with profiles `home` (admin token) and `legacy` (API secret) over `store`.
    private func run(_ source: String, store: StateStore, file: StaticString = #filePath, line: UInt = #line) async throws
        -> [String]
    {
        let config = try HostConfig(text: """
            [nightscout.home]
            url = "\(site.url.absoluteString)"
            token_env = "NS_TOKEN"
            [nightscout.legacy]
            url = "\(site.url.absoluteString)"
            secret_env = "NS_SECRET"
            """)
        let environment = ["NS_TOKEN": site.adminToken, "NS_SECRET": NightscoutModuleSim.secret]
        let (transcript, outcome) = try await runLua(
            "local nightscout = require 'nightscout'\n" + source,
            modules: [NightscoutModule(config: config, store: store, environment: environment, retryPolicy: RetryPolicy(initialDelay: 3600)),
                      OutboxModule(store: store)])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    func testSyncAddsThenNothingAndMirrorReadsWithoutTheNetwork() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local t0 = 1716000000000
            local ids = {}
            for i = 0, 2 do
              ids[#ids + 1] = assert(home:upload_bg { sgv = 100 + i, date = t0 + i * 300000, device = "lua-sync" }).id
            end
            local function count(list, wanted)
              local set, n = {}, 0
              for _, id in ipairs(wanted) do set[id] = true end
              for _, id in ipairs(list) do if set[id] then n = n + 1 end end
              return n
            end
            local r = assert(home:sync "entries")
            print(count(r.added, ids), r.pages >= 1, r.documents >= 3, math.type(r.watermark), getmetatable(r.added) == json.array_mt)
            local again = assert(home:sync "entries")
            print(#again.added, #again.updated, #again.deleted, again.documents, json.encode(again.deleted), again.watermark == r.watermark)
            assert(home:delete("entries", ids[1]))
            local d = assert(home:sync "entries")
            print(#d.added, json.encode(d.deleted) == json.encode({ ids[1] }))
            local live = assert(home:mirror("entries", { from = t0, to = t0 + 600000 }))
            local all = assert(home:mirror("entries", { from = t0, to = t0 + 600000, deleted = true }))
            print(#live, #all, live[1].sgv, live[1].dateString, live[1].date)
            """, store: store)
        XCTAssertEqual(lines, [
            "3\ttrue\ttrue\tinteger\ttrue",
            "0\t0\t0\t0\t[]\ttrue",
            "0\ttrue",
            "2\t3\t102\t2024-05-18T02:50:00.000Z\t1716000600000",
        ])

        // Every request to the server fails now; the mirror needs none.
        await site.sim.inject(.status(500), count: nil)
        let offline: [String]
        do {
            offline = try await run("""
                local home = assert(nightscout.client "home")
                local t0 = 1716000000000
                local ok, err = home:entries { count = 1 }
                print(ok, err.status)
                local docs = assert(home:mirror("entries", { since = t0, to = t0 + 600000 }))
                print(#docs, docs[1].sgv, docs[2].sgv, docs[2].device)
                local curried = assert(home:mirror "entries" { since = "2024-05-18T02:40:00Z", to = t0 + 600000, count = 1 })
                print(#curried, curried[1].sgv)
                local reader = home:mirror("entries")
                print(type(reader), #assert(reader { from = t0, to = t0 + 600000, limit = 5 }))
                local none = assert(home:mirror("treatments", { from = t0, to = t0 + 1 }))
                print(#none, json.encode(none))
                """, store: store)
        } catch {
            await site.sim.clearFaults()
            throw error
        }
        await site.sim.clearFaults()
        XCTAssertEqual(offline, [
            "nil\t500",
            "2\t102\t101\tlua-sync",
            "1\t102",
            "function\t2",
            "0\t[]",
        ])
    }

    func testFullSyncFindsDocumentsWrittenThroughV1() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local legacy = assert(nightscout.client "legacy")
            local t1 = 1716100000000
            local v1 = assert(legacy:upload_bg { sgv = 140, date = t1, device = "lua-full" })
            local v3 = assert(home:upload_bg { sgv = 150, date = t1 + 300000, device = "lua-full" })
            local function has(list, id)
              for _, x in ipairs(list) do if x == id then return true end end
              return false
            end
            local r = assert(home:sync "entries")
            print(has(r.added, v1.id), has(r.added, v3.id))
            local f = assert(home:full_sync("entries", { from = t1, to = t1 + 600000 }))
            print(has(f.missed_by_history, v1.id), has(f.added, v1.id), has(f.missed_by_history, v3.id), f.api,
                  #f.missing_on_server, getmetatable(f.missing_on_server) == json.array_mt)
            local docs = assert(home:mirror("entries", { from = t1, to = t1 + 600000 }))
            print(#docs, docs[1].sgv, docs[2].sgv)
            local again = assert(home:full_sync("entries", { since = "2024-05-19T06:26:40Z", to = t1 + 600000 }))
            print(#again.added, #again.missed_by_history)
            -- A document removed for good is reported, and left in the mirror.
            assert(home:delete("entries", v3.id, { permanent = true }))
            local gone = assert(home:full_sync("entries", { from = t1, to = t1 + 600000 }))
            print(json.encode(gone.missing_on_server) == json.encode({ v3.id }), #assert(home:mirror("entries", { from = t1, to = t1 + 600000 })))
            -- A v1 client reconciles through v1 into the same mirror.
            local l = assert(legacy:full_sync("entries", { from = t1, to = t1 + 600000 }))
            print(l.api, #l.added, l.documents)
            """, store: store)
        XCTAssertEqual(lines, [
            "false\ttrue",
            "true\ttrue\tfalse\tv3\t0\ttrue",
            "2\t150\t140",
            "0\t0",
            "true\t2",
            "v1\t0\t1",
        ])
    }

    func testErrorsAndArguments() async throws {
        let store = try StateStore()
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            local legacy = assert(nightscout.client "legacy")
            local ok, err = legacy:sync "entries"
            print(ok, err.code, err.service)
            print(pcall(home.sync, home, "nope"))
            print(pcall(home.mirror, home, "entries", { bogus = 1 }))
            print(pcall(home.mirror, home, "entries", { from = 1716000000000, since = 1716000000000 }))
            print(pcall(home.full_sync, home, "entries", { from = 1716000000000, to = 1715000000000 }))
            print(select(2, pcall(home.mirror, home, "entries", { from = 1716000000 })):match("looks like seconds") ~= nil)
            """, store: store)
        XCTAssertEqual(lines.count, 6)
        XCTAssertEqual(lines.first, "nil\tunsupported\tnightscout")
        XCTAssertTrue(lines[1].hasPrefix("false\tbad argument #1 to ") && lines[1].contains("unknown collection 'nope'"), lines[1])
        XCTAssertTrue(lines[2].contains("unknown option 'bogus'"), lines[2])
        XCTAssertTrue(lines[3].contains("opts.from and opts.since cannot both be given"), lines[3])
        XCTAssertTrue(lines[4].contains("opts.to is before opts.from"), lines[4])
        XCTAssertEqual(lines[5], "true")
    }
}
