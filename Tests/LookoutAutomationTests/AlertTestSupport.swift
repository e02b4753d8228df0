import Foundation
import LookoutWire
import Logging
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutModules
@testable import LookoutAutomation

/// `testclock.now()` (epoch ms) and `testclock.advance(seconds)`: scripts drive the manual clock.
struct TestClockModule: LuaModule {
    let name = "testclock"
    let stub = "---@meta testclock\n"
    let clock: ManualClock

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        let clock = self.clock
        engine.pushLibrary([
            "now": { call in call.returning(.int(Int64((clock.now.timeIntervalSince1970 * 1000).rounded()))) },
            "advance": { call in
                clock.advance(try call.number(1))
                return .nothing
            },
        ], prefix: "testclock.", on: stack)
    }
}

/// Runs alert scripts over one state store, a manual clock and recorded side effects.
struct AlertHarness {
    let store: StateStore
    let clock: ManualClock
    let log = SideEffectLog()
    /// Warnings the scripts gave, in order.
    let warnings = Locked<[String]>([])
    let config: HostConfig
    /// Whether notifications are recorded (default) or really queued and sent.
    let live: Bool

    /// Channels `phone`, `partner` and `watch` (log channels), unless `config` says otherwise.
    init(store: StateStore? = nil, clock: ManualClock? = nil, config: String? = nil, live: Bool = false) throws {
        self.live = live
        self.store = try store ?? StateStore()
        self.clock = clock ?? ManualClock(AlertHarness.localNoon())
        self.config = try HostConfig(text: config ?? """
            [notify.phone]
            type = "log"
            [notify.partner]
            type = "log"
            [notify.watch]
            type = "log"
            """)
    }

    /// Today at 12:00 local time (quiet hours tests need a known local time).
    static func localNoon() -> Date {
        Calendar.current.date(bySettingHour: 12, minute: 0, second: 0, of: Date(timeIntervalSince1970: 1_780_000_000))!
    }

    /// Runs `source` with `alert`, `notify` and `testclock`, plus a prelude: `feed(v)` sets the
    /// series to value `v` now, `at(minutes, v)` advances the clock and feeds, `series()` reads it.
    func run(_ source: String, name: String = "alerts.lua", file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let store = self.store
        let modules: [any LuaModule] = [
            NotifyModule(config: config, environment: [:], logger: Logger(label: "test"), sideEffects: live ? .live : .record(log),
                         openStore: { store }),
            AlertModule(config: config, openStore: { store }),
            TestClockModule(clock: clock),
        ]
        let prelude = """
            local alert, clock = require "alert", require "testclock"
            local value, time = nil, nil
            local function series() return value, time end
            local function feed(v) value, time = v, clock.now() end
            local function at(minutes, v) clock.advance(minutes * 60); if v ~= nil then feed(v) end end

            """
        let clock = self.clock
        let (transcript, outcome) = try await runLua(prelude + source, name: name, modules: modules) { options in
            options.clock = clock.lua
        }
        warnings.withLock { $0 += transcript.warnings }
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    /// The recorded notifications as `channel kind severity alert_id` lines.
    var notifications: [String] {
        log.all.filter { $0.kind == "notify" }.map {
            "\($0.target) \($0.details["kind"] ?? "?") \($0.details["severity"] ?? "?") \($0.details["alert_id"] ?? "-")"
        }
    }

    /// The recorded notification ids.
    var ids: [String] { log.all.compactMap { $0.details["id"] } }
}
