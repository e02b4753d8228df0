import Foundation
import XCTest

@testable import LookoutConfig

final class ConfigTests: XCTestCase {
    static let sample = """
        [limits]
        memory = "32MB"
        cpu = "250ms"
        time = "1h30m"

        [log]
        level = "debug"

        [nightscout.home]
        url = "https://ns.example.org"
        secret_env = "NS_API_SECRET"
        token_file = "~/.config/lookout/home.token"
        units = "mmol"
        headers = { "X-Client" = "lookout", retries = [1, 2] }

        [nightscout.clinic]
        url = "https://clinic.example.org"

        [signalk.boat]
        url = "http://boat.local:3000"

        [northlight.default]
        [garmin.me]
        password_file = "/etc/lookout/garmin"

        [scripts."alerts.lua"]
        trusted = true
        [scripts."tools/report.lua"]
        trusted = false
        """

    func config(_ text: String) throws -> HostConfig {
        try HostConfig(text: text, fileName: "config.toml")
    }

    /// The error the text produces; fails the test if it loads.
    func configError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ConfigError? {
        do {
            _ = try HostConfig(text: text, fileName: "config.toml")
            XCTFail("expected a ConfigError", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Loading

    func testDefaults() throws {
        let empty = try config("")
        XCTAssertEqual(empty.limits, .defaults)
        XCTAssertEqual(empty.limits.memoryBytes, 64 * 1024 * 1024)
        XCTAssertEqual(empty.limits.cpuSeconds, 5)
        XCTAssertNil(empty.limits.timeSeconds)
        XCTAssertEqual(empty.logLevel, .info)
        XCTAssertEqual(empty.profiles(service: "nightscout"), [])
        XCTAssertEqual(HostConfig().limits, .defaults)
    }

    func testMissingFileGivesDefaults() throws {
        let path = NSTemporaryDirectory() + "lookout-missing-\(UUID().uuidString)/config.toml"
        let config = try HostConfig.load(path: path)
        XCTAssertFalse(config.fileExists)
        XCTAssertEqual(config.limits, .defaults)
        XCTAssertEqual(config.fileName, path)
        XCTAssertEqual(config.filePath, path)
    }

    func testLoadFromFileUsesPathInMessages() throws {
        let directory = try configTestTemporaryDirectory()
        let path = directory + "/config.toml"
        try "[limits]\nmemory = true\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try HostConfig.load(path: path)) { error in
            XCTAssertEqual(
                "\(error)",
                "\(path):2:10: limits.memory: expected a size such as \"64MB\" or \"1GB\" (powers of 1024), or 0 or \"none\" for no limit, got a boolean"
            )
        }
        try "[log]\nlevel = \"error\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let loaded = try HostConfig.load(paths: LookoutPaths(configFile: path, stateDirectory: directory))
        XCTAssertTrue(loaded.fileExists)
        XCTAssertEqual(loaded.filePath, path)
        XCTAssertEqual(loaded.logLevel, .error)
        XCTAssertThrowsError(try HostConfig.load(path: directory)) { error in
            XCTAssertTrue("\(error)".contains("is a directory"))
        }
        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try HostConfig.load(path: path)) { error in
            XCTAssertTrue("\(error)".contains("not UTF-8"))
        }
    }

    func testSyntaxErrorsNameTheFile() {
        let error = configError("[limits]\nmemory = \"64MB\n")
        XCTAssertEqual(
            error?.description,
            "config.toml:2:15: newline in a single-line string; close the quote, or use \"\"\" for a multi-line string")
    }

    func testSample() throws {
        let config = try config(Self.sample)
        XCTAssertEqual(config.limits.memoryBytes, 32 << 20)
        XCTAssertEqual(config.limits.cpuSeconds, 0.25)
        XCTAssertEqual(config.limits.timeSeconds, 5400)
        XCTAssertEqual(config.logLevel, .debug)
        XCTAssertEqual(config.profiles(service: "nightscout"), ["clinic", "home"])
        XCTAssertEqual(config.profiles(service: "signalk"), ["boat"])
        XCTAssertEqual(config.profiles(service: "northlight"), ["default"])
        XCTAssertEqual(config.profiles(service: "nope"), [])

        let home = try XCTUnwrap(config.profile(service: "nightscout", name: "home"))
        XCTAssertEqual(home.line, 9)
        XCTAssertEqual(home["url"], "https://ns.example.org")
        XCTAssertEqual(home.line(of: "url"), 10)
        XCTAssertEqual(home.secretNames, ["secret", "token"])
        XCTAssertTrue(home.hasSecret("secret"))
        XCTAssertFalse(home.hasSecret("password"))
        XCTAssertEqual(home.settings.keys, ["url", "units", "headers"])
        XCTAssertEqual(try home.string("url"), "https://ns.example.org")
        XCTAssertNil(try home.string("absent"))
        XCTAssertThrowsError(try home.bool("units")) { error in
            XCTAssertEqual("\(error)", "config.toml:13:9: nightscout.home.units: expected true or false, got \"mmol\"")
        }
        XCTAssertEqual(try home.strings("absent"), nil)
        XCTAssertThrowsError(try home.strings("url"))
        XCTAssertEqual(
            home.error(key: "url", "unreachable").description, "config.toml:10:7: nightscout.home.url: unreachable")
        XCTAssertEqual(home.error(key: "port", "missing").description, "config.toml:9: nightscout.home.port: missing")

        let garmin = try XCTUnwrap(config.profile(service: "garmin", name: "me"))
        XCTAssertEqual(garmin.secretNames, ["password"])
        XCTAssertTrue(garmin.settings.isEmpty)
        XCTAssertNil(config.profile(service: "garmin", name: "you"))
        XCTAssertNil(config.profile(service: "limits", name: "memory"))
    }

    func testScriptSettings() throws {
        let config = try config(Self.sample)
        XCTAssertEqual(config.scriptSettings(file: "alerts.lua"), .init(trusted: true, line: 26))
        XCTAssertTrue(config.scriptSettings(file: "/home/me/Scripts/alerts.lua").trusted)
        XCTAssertFalse(config.scriptSettings(file: "/home/me/Scripts/myalerts.lua").trusted)
        XCTAssertFalse(config.scriptSettings(file: "tools/report.lua").trusted)
        XCTAssertEqual(config.scriptSettings(file: "tools/report.lua").line, 28)
        XCTAssertEqual(config.scriptSettings(file: "other.lua"), .init(trusted: false, line: nil))
    }

    func testLimitVariants() throws {
        XCTAssertEqual(try config("[limits]\nmemory = 1048576").limits.memoryBytes, 1 << 20)
        XCTAssertEqual(try config("[limits]\nmemory = \"2MiB\"").limits.memoryBytes, 2 << 20)
        XCTAssertEqual(try config("[limits]\nmemory = 0").limits.memoryBytes, 0)  // none, as --memory-limit 0
        XCTAssertEqual(try config("[limits]\nmemory = \"0\"").limits.memoryBytes, 0)
        XCTAssertEqual(try config("[limits]\nmemory = \"none\"").limits.memoryBytes, 0)
        XCTAssertEqual(try config("[limits]\nmemory = \"1GB\"").limits.memoryBytes, 1 << 30)
        XCTAssertEqual(try config("[limits]\ncpu = 2").limits.cpuSeconds, 2)
        XCTAssertEqual(try config("[limits]\ncpu = 0.5").limits.cpuSeconds, 0.5)
        XCTAssertNil(try config("[limits]\ntime = 0").limits.timeSeconds)
        XCTAssertNil(try config("[limits]\ntime = \"none\"").limits.timeSeconds)
        XCTAssertNil(try config("[limits]\ntime = \"0s\"").limits.timeSeconds)
        XCTAssertEqual(try config("[limits]\ntime = \"90s\"").limits.timeSeconds, 90)
        XCTAssertEqual(try config("limits.time = 30").limits.timeSeconds, 30)
        XCTAssertEqual(try config("[log]\nlevel = \"WARNING\"").logLevel, .warning)
        XCTAssertEqual(try config("").limits.requestsInFlight, 32)
        XCTAssertEqual(try config("[limits]\nrequests_in_flight = 4").limits.requestsInFlight, 4)
        XCTAssertTrue(configError("[limits]\nrequests_in_flight = 0")?.message.contains("from 1 to 10000") ?? false)
        XCTAssertTrue(configError("[limits]\nrequests_in_flight = \"8\"")?.message.contains("whole number") ?? false)
    }

    // MARK: Errors

    func testUnknownSectionSuggestsTheClosestName() {
        let error = configError("[limits]\n\n[nightscot.home]\nurl = \"x\"")
        XCTAssertEqual(error?.line, 3)
        XCTAssertEqual(error?.column, 2)
        XCTAssertEqual(error?.keyPath, "nightscot")
        XCTAssertEqual(
            error?.message,
            "unknown section [nightscot]; did you mean [nightscout]? Known: [garmin], [limits], [log], "
                + "[nightscout], [northlight], [notify], [scripts], [serve], [signalk], [state]")
    }

    func testUnknownTopLevelKey() {
        let error = configError("memory = \"64MB\"")
        XCTAssertEqual(
            error?.description,
            "config.toml:1:1: memory: unknown section [memory]; known: [garmin], [limits], [log], [nightscout], "
                + "[northlight], [notify], [scripts], [serve], [signalk], [state]")
    }

    func testUnknownKeysInFixedSections() {
        let limits = configError("[limits]\nmemroy = \"64MB\"")
        XCTAssertEqual(
            limits?.description,
            "config.toml:2:1: limits.memroy: unknown key memroy in [limits]; did you mean memory? Known: cpu, log_burst, log_line, log_rate, memory, outbox_bytes, outbox_items, requests_in_flight, store, time"
        )
        let log = configError("[log]\nlevle = \"info\"")
        XCTAssertEqual(log?.keyPath, "log.levle")
        XCTAssertTrue(log?.message.contains("did you mean level?") ?? false)
        let script = configError("[scripts.\"a.lua\"]\ntrustd = true")
        XCTAssertEqual(
            script?.description,
            "config.toml:2:1: scripts.\"a.lua\".trustd: unknown key trustd in [scripts.\"a.lua\"]; did you mean trusted? Known: settings, trusted"
        )
    }

    func testWrongTypes() {
        let cases: [(String, String)] = [
            (
                "[limits]\nmemory = true",
                "config.toml:2:10: limits.memory: expected a size such as \"64MB\" or \"1GB\" (powers of 1024), or 0 or \"none\" for no limit, got a boolean"
            ),
            (
                "[limits]\nmemory = \"64XB\"",
                "config.toml:2:10: limits.memory: expected a size such as \"64MB\" or \"1GB\" (powers of 1024), or 0 or \"none\" for no limit, got \"64XB\""
            ),
            (
                "[limits]\nmemory = 64",
                "config.toml:2:10: limits.memory: 64 bytes is too little for a script (the minimum is 1MB); "
                    + "write a size with its unit such as \"64MB\", or 0 for no limit"
            ),
            (
                "[limits]\nmemory = \"100KB\"",
                "config.toml:2:10: limits.memory: 102400 bytes is too little for a script (the minimum is 1MB); "
                    + "write a size with its unit such as \"64MB\", or 0 for no limit"
            ),
            (
                "[limits]\nmemory = \"64\"",
                "config.toml:2:10: limits.memory: 64 bytes is too little for a script (the minimum is 1MB); "
                    + "write a size with its unit such as \"64MB\", or 0 for no limit"
            ),
            (
                "[limits]\nmemory = -5",
                "config.toml:2:10: limits.memory: expected a size such as \"64MB\" or \"1GB\" (powers of 1024), or 0 or \"none\" for no limit, got an integer"
            ),
            (
                "[limits]\ncpu = \"fast\"",
                "config.toml:2:7: limits.cpu: expected a duration such as \"5s\", \"250ms\" or \"1m\", got \"fast\""
            ),
            ("[limits]\ncpu = 0", "config.toml:2:7: limits.cpu: must be longer than 0 seconds"),
            (
                "[limits]\ntime = [1]",
                "config.toml:2:8: limits.time: expected a duration such as \"30s\" or \"5m\", or 0 or \"none\" for no limit, got an array"
            ),
            (
                "[log]\nlevel = \"verbose\"",
                "config.toml:2:9: log.level: expected one of trace, debug, info, notice, warning, error, critical, got \"verbose\""
            ),
            (
                "[log]\nlevel = \"warn\"",
                "config.toml:2:9: log.level: expected one of trace, debug, info, notice, warning, error, critical, got \"warn\"; did you mean \"warning\"?"
            ),
            (
                "[log]\nlevel = 3",
                "config.toml:2:9: log.level: expected one of trace, debug, info, notice, warning, error, critical, got an integer"
            ),
            (
                "[scripts.\"a.lua\"]\ntrusted = \"yes\"",
                "config.toml:2:11: scripts.\"a.lua\".trusted: expected true or false, got \"yes\""
            ),
            ("scripts = 1", "config.toml:1:11: scripts: expected a table [scripts], got an integer"),
            (
                "scripts.\"a.lua\" = true",
                "config.toml:1:19: scripts.\"a.lua\": expected a table [scripts.\"a.lua\"], got a boolean"
            ),
            ("nightscout = \"x\"", "config.toml:1:14: nightscout: expected a table [nightscout.<profile>], got \"x\""),
            (
                "[nightscout]\nurl = \"https://x\"",
                "config.toml:2:7: nightscout.url: expected a profile table such as [nightscout.home], got \"https://x\""
            ),
            (
                "[signalk.boat]\nx = { a = { b = 1 } }",
                "config.toml:2:11: signalk.boat.x.a: profile values must be scalars, or arrays and tables of scalars"
            ),
            (
                "[signalk.boat]\nx = [[1]]",
                "config.toml:2:5: signalk.boat.x: profile values must be scalars, or arrays and tables of scalars"
            ),
            (
                "[signalk.boat]\nx = [{ a = 1 }]",
                "config.toml:2:5: signalk.boat.x: profile values must be scalars, or arrays and tables of scalars"
            ),
            (
                "[signalk.boat]\nsecret_env = 5",
                "config.toml:2:14: signalk.boat.secret_env: expected the name of an environment variable, such as \"NS_API_SECRET\", got an integer"
            ),
            (
                "[signalk.boat]\ntoken_file = \"\"",
                "config.toml:2:14: signalk.boat.token_file: expected the path of a file holding the secret, got an empty string"
            ),
            (
                "[signalk.boat]\n_env = \"X\"",
                "config.toml:2:1: signalk.boat._env: the key must name a secret, such as secret_env"
            ),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(configError(text)?.description, expected, text)
        }
    }

    func testNestedProfileTablesAndArraysOfScalarsAreFine() throws {
        let config = try config(
            "[signalk.boat]\nports = [1, 2]\n[signalk.boat.headers]\nAccept = \"json\"\nlist = [\"a\"]")
        let boat = try XCTUnwrap(config.profile(service: "signalk", name: "boat"))
        XCTAssertEqual(boat["headers"], ["Accept": "json", "list": ["a"]])
    }

    // MARK: Secrets written in clear

    func testSecretLiteralsAreRefusedWithoutEchoingThem() {
        let names = [
            "secret", "api_secret", "SECRET", "token", "access_token", "password", "api_key", "apikey",
            "key", "consumer_key", "x-key", "apiKey", "clientSecret",
        ]
        for name in names {
            let value = "hunter2-\(name)-s3cr3t"
            let error = configError("# c\n[nightscout.home]\nurl = \"https://x\"\n\(name) = \"\(value)\"")
            XCTAssertEqual(
                error?.description,
                "config.toml:4: nightscout.home.\(name): secrets are not written in the config; "
                    + "use \(name)_env = \"VAR\" or \(name)_file = \"PATH\"", name)
            XCTAssertFalse(error?.description.contains(value) ?? true, name)
        }
        // Numbers and nested tables are refused too.
        XCTAssertEqual(configError("[garmin.me]\npassword = 123456")?.line, 2)
        XCTAssertEqual(
            configError("[garmin.me.oauth]\nconsumer_secret = \"abc\"")?.keyPath, "garmin.me.oauth.consumer_secret")
    }

    func testKeysThatOnlyLookLikeSecretsAreAccepted() throws {
        let config = try config("[nightscout.home]\nhotkey = \"F1\"\nmonkey = 1\nkeys = 2\ntoken_count = 3")
        XCTAssertEqual(config.profile(service: "nightscout", name: "home")?.settings.count, 4)
    }

    func testSecretPastedIntoEnvKeyIsNotEchoed() {
        let pasted = "abc123-DEF/456+ghi=="
        let error = configError("[nightscout.home]\nsecret_env = \"\(pasted)\"")
        XCTAssertEqual(error?.line, 2)
        XCTAssertEqual(error?.keyPath, "nightscout.home.secret_env")
        XCTAssertTrue(error?.message.contains("put the secret itself in that variable") ?? false)
        XCTAssertFalse(error?.description.contains(pasted) ?? true)
    }

    // MARK: What scripts see

    func testPublicValueHidesSecretReferences() throws {
        let config = try config(Self.sample)
        XCTAssertEqual(config.publicValue(path: "nightscout.home.url"), "https://ns.example.org")
        XCTAssertNil(config.publicValue(path: "nightscout.home.secret_env"))
        XCTAssertNil(config.publicValue(path: "nightscout.home.token_file"))
        let home = try XCTUnwrap(config.publicValue(path: "nightscout.home")?.tableValue)
        XCTAssertEqual(home.keys, ["url", "units", "headers"])
        XCTAssertEqual(config.publicValue(path: "garmin.me"), .table([:]))
        XCTAssertEqual(config.publicValue(path: "scripts.\"alerts.lua\".trusted"), true)
        XCTAssertEqual(config.publicValue(path: "limits.memory"), "32MB")
        XCTAssertNil(config.publicValue(path: "limits.nope"))
        XCTAssertNil(config.publicValue(path: "limits..memory"))
        let everything = try XCTUnwrap(config.publicValue(path: "")?.tableValue)
        XCTAssertFalse(TOMLValue.table(everything).description.contains("_env"))
        XCTAssertFalse(TOMLValue.table(everything).description.contains("_file"))
        XCTAssertFalse(TOMLValue.table(everything).description.contains("NS_API_SECRET"))
        XCTAssertEqual(everything.keys, ["limits", "log", "nightscout", "signalk", "northlight", "garmin", "scripts"])
    }

    // MARK: Error formatting

    func testErrorDescriptionOmitsMissingParts() {
        XCTAssertEqual(ConfigError(message: "m").description, "m")
        XCTAssertEqual(ConfigError(file: "f", message: "m").description, "f: m")
        XCTAssertEqual(ConfigError(file: "f", line: 3, message: "m").description, "f:3: m")
        XCTAssertEqual(
            ConfigError(file: "f", line: 3, column: 4, keyPath: "a.b", message: "m").description, "f:3:4: a.b: m")
        XCTAssertEqual(ConfigError(line: 3, column: 4, message: "m").description, "3:4: m")
        XCTAssertEqual(ConfigError(column: 4, keyPath: "k", message: "m").description, "k: m")
        XCTAssertEqual(ConfigError(line: 1, message: "m").inFile("x.toml").description, "x.toml:1: m")
    }

    func testSuggestions() {
        XCTAssertEqual(ConfigWording.suggestion(for: "nightscot", among: ["nightscout", "signalk"]), "nightscout")
        XCTAssertEqual(ConfigWording.suggestion(for: "SIGNALK", among: ["nightscout", "signalk"]), "signalk")
        XCTAssertNil(ConfigWording.suggestion(for: "zzz", among: ["nightscout", "signalk"]))
        XCTAssertEqual(ConfigWording.editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(ConfigWording.editDistance("", "abc"), 3)
    }

    func testSchemaListsEveryService() {
        XCTAssertEqual(HostConfig.knownServices, ["nightscout", "signalk", "northlight", "garmin"])
        XCTAssertEqual(
            HostConfig.knownSections, ["garmin", "limits", "log", "nightscout", "northlight", "notify", "scripts", "serve", "signalk", "state"])
        XCTAssertTrue(HostConfig.LogLevel.trace < .critical)
    }
}

/// A fresh directory under the system temporary directory.
func configTestTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "lookout-config-tests-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
