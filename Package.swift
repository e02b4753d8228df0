// swift-tools-version: 6.0
// Lookout: a scripting host that embeds Lua 5.4 and gives scripts clients for Nightscout,
// Signal K, Northlight and Garmin Connect. Layers (each imports only those below it):
//   lookout (CLI) → LookoutScenarios → LookoutAutomation → LookoutModules → LookoutStore →
//   LookoutConfig → Kits / LookoutSim → LookoutWire;  Lua → LuaShim (C) → CLua under the house
//   targets (only Lua and LuaShim touch the C API). README's "Architecture" has the picture.
import PackageDescription

/// Lua files of a target (`Folder/name` → `Folder/name.lua`: module stubs and Lua-written parts
/// of modules), embedded in the binary (`PackageResources.name_lua`).
func lua(_ names: String...) -> [Resource] { names.map { .embedInCode("\($0).lua") } }

let package = Package(
    name: "Lookout",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "lookout", targets: ["lookout"]),
        .library(name: "Lua", targets: ["Lua"]),
        .library(name: "LookoutAutomation", targets: ["LookoutAutomation"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // The system Lua 5.4 (Debian liblua5.4-dev, Homebrew lua).
        .systemLibrary(
            name: "CLua", pkgConfig: "lua5.4",
            providers: [.apt(["liblua5.4-dev"]), .brew(["lua"])]),
        // libedit for the REPL's line editing (Debian libedit-dev).
        .systemLibrary(
            name: "CEditLine", pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"]), .brew(["libedit"])]),
        // Every function that may longjmp lives here, in C: Swift frames never see a Lua error.
        .target(name: "LuaShim", dependencies: ["CLua"]),
        // The Swift face of the interpreter: states, values, tasks, limits, sandbox, REPL engine.
        .target(
            name: "Lua",
            dependencies: ["LuaShim", "CLua", .product(name: "Logging", package: "swift-log")],
            resources: [.embedInCode("Prelude"), .embedInCode("Stubs")]),
        // config.toml, profiles, secrets, durations and sizes, paths (knows no service).
        .target(name: "LookoutConfig", dependencies: ["Lua", "LookoutWire"]),
        // The state database, SQLite (GRDB) or PostgreSQL (postgres-nio) behind one set of
        // protocols: outbox (generic), notify queue, audit, mirror, alert acknowledgements, the
        // per-script key-value store, the remote-command ledger.
        .target(
            name: "LookoutStore",
            dependencies: [
                "LookoutConfig", "LookoutWire", "Lua", "NightscoutKit", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The Lua modules scripts see besides the core ones: one folder per module (binding + stub).
        .target(
            name: "LookoutModules",
            dependencies: [
                "LookoutWire",
                "Lua", "LookoutConfig", "LookoutStore", "NightscoutKit", "SignalKKit", "GarminKit", "NorthlightKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: lua("Nightscout/nightscout", "Nightscout/remote_command", "Nightscout/history_iterator",
                           "SignalK/signalk", "SignalK/stream_methods", "Garmin/garmin", "Garmin/garmin_login",
                           "Feedback/feedback", "HTTP/http", "Config/config", "Log/log", "Store/store",
                           "Store/store_update", "Chart/chart", "Outbox/outbox", "Health/health")),
        // What runs scripts unattended: serve, schedule, alert, notify, health, doctor.
        .target(
            name: "LookoutAutomation",
            dependencies: [
                "Lua", "LookoutWire", "LookoutConfig", "LookoutStore", "LookoutModules", "NightscoutKit", "SignalKKit", "GarminKit",
                "NorthlightKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            resources: lua("Alert/alert", "Alert/alert_library", "Schedule/schedule", "Notify/notify")),
        // `lookout test` and the demo: scenarios on virtual time, side effects recorded.
        .target(
            name: "LookoutScenarios",
            dependencies: ["Lua", "LookoutWire", "LookoutConfig", "LookoutModules", "LookoutAutomation"]),
        // What the Kits and the simulator share on the wire: one JSON value, parser and writer, dates,
        // the HTTP transport (timeouts, redaction, origin pinning, retry policy)
        // (knows no Lua and no service).
        .target(
            name: "LookoutWire",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        // Nightscout client: auth, typed models, API v1 and v3 (knows nothing of Lua).
        .target(
            name: "NightscoutKit",
            dependencies: [
                "LookoutWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        // Signal K client: discovery, delta stream, value store, REST (knows nothing of Lua).
        .target(
            name: "SignalKKit",
            dependencies: [
                "LookoutWire",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        // Garmin Connect client: SSO, OAuth1/OAuth2 tokens (garth's format), Connect API (knows nothing of Lua).
        .target(
            name: "GarminKit",
            dependencies: [
                "LookoutWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        // Northlight feedback client: feedback, bugs, votes, board, roadmap, device info (knows nothing of Lua).
        .target(
            name: "NorthlightKit",
            dependencies: [
                "LookoutWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        // Spec-faithful local servers (Nightscout first). Shares no model code with any Kit (only LookoutWire).
        .target(
            name: "LookoutSim",
            dependencies: [
                "LookoutWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The ready automations (Scripts/*.lua), embedded so that the demo runs from any folder.
        .target(
            name: "ReadyScripts", path: "Scripts", exclude: ["README.md", "scenarios"], sources: ["ReadyScripts.swift"],
            resources: ["low-alert", "nightscout-to-signalk", "signalk-to-nightscout", "not-looping", "daily-report",
                        "garmin-to-nightscout", "feedback-on-failure"].map { .embedInCode("\($0).lua") }),
        .executableTarget(
            name: "lookout",
            dependencies: [
                "LookoutWire", "ReadyScripts",
                "LookoutAutomation", "LookoutScenarios", "LookoutModules", "LookoutStore", "LookoutConfig",
                "Lua", "CEditLine", "LookoutSim", "NightscoutKit", "SignalKKit",
                "GarminKit",
                "NorthlightKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The Swift runtime and Foundation linked in: no dynamic loading and relocation of
            // their libraries at every start (P5), and fewer pages per process (P6). No test target
            // may depend on this one, or the flag would reach the test bundle as well.
            // lld (the tool chain's) with packed relative relocations (DT_RELR, glibc 2.36+:
            // Debian 12): 164,000 relocations in 32 KB instead of 3.9 MB, so the stripped binary
            // is 4 MB smaller and the loader reads less at every start (README: "Binary size").
            swiftSettings: [.unsafeFlags(["-static-stdlib"])],
            linkerSettings: [.unsafeFlags([
                "-static-stdlib", "-Xlinker", "--no-export-dynamic",
                "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
            ])]),
        .executableTarget(
            name: "lookout-bench",
            dependencies: [
                "LookoutWire",
                "LookoutAutomation", "LookoutModules", "LookoutConfig", "Lua", "NightscoutKit", "SignalKKit", "LookoutSim",
                .product(name: "Logging", package: "swift-log"), .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.embedInCode("Resources/compute.lua")]),
        // Helpers shared by the test targets (transcripts, running Lua source).
        .target(
            name: "LookoutTestSupport",
            dependencies: [
                "Lua", "LookoutSim", "LookoutWire", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/LookoutTestSupport"),
        .testTarget(
            name: "LuaTests", dependencies: ["Lua", "LuaShim", "CLua", "LookoutTestSupport"],
            exclude: ["lua"]),
        .testTarget(name: "LookoutConfigTests", dependencies: ["LookoutConfig", "Lua"]),
        .testTarget(name: "LookoutStoreTests", dependencies: ["LookoutStore", "NightscoutKit", "LookoutSim", "LookoutTestSupport"]),
        .testTarget(
            name: "LookoutModulesTests",
            dependencies: [
                "LookoutWire",
                "LookoutModules", "LookoutAutomation", "LookoutStore", "LookoutConfig", "Lua", "LookoutTestSupport",
                "NightscoutKit", "SignalKKit", "GarminKit", "NorthlightKit", "LookoutSim",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .testTarget(
            name: "LookoutAutomationTests",
            dependencies: [
                "LookoutWire", "LookoutAutomation", "LookoutModules", "LookoutStore", "LookoutConfig", "Lua", "LookoutTestSupport",
                "NightscoutKit", "SignalKKit", "LookoutSim",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .testTarget(name: "LookoutScenariosTests", dependencies: ["LookoutScenarios", "LookoutModules", "Lua", "LookoutTestSupport"]),
        // Runs the `lookout` binary, which `swift build` and `swift test` build; it cannot depend on
        // the executable target (see its linker settings).
        .testTarget(
            name: "LookoutCLITests",
            dependencies: [
                "LookoutWire", "LookoutSim", "LookoutStore", "LookoutConfig", "NightscoutKit", "LookoutTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
            ]),
        .testTarget(
            name: "LookoutSimTests",
            dependencies: [
                "LookoutWire",
                "LookoutSim", "LookoutTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "WSClient", package: "swift-websocket"),
            ]),
        .testTarget(name: "NightscoutKitTests", dependencies: ["NightscoutKit", "LookoutWire", "LookoutSim", "LookoutTestSupport"]),
        .testTarget(
            name: "GarminKitTests",
            dependencies: ["GarminKit", "LookoutWire", "LookoutSim", "LookoutTestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "SignalKKitTests", dependencies: ["SignalKKit", "LookoutWire", "LookoutSim", "LookoutTestSupport"]),
        .testTarget(name: "LookoutWireTests", dependencies: ["LookoutWire"]),
        .testTarget(name: "NorthlightKitTests", dependencies: ["NorthlightKit", "LookoutWire", "LookoutSim", "LookoutTestSupport"]),
    ]
)
