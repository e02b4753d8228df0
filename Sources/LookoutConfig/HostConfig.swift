import Foundation
import LookoutWire
import Lua

/// The host configuration (`config.toml`): resource limits, log level, service profiles and
/// per-script settings, validated when loaded.
///
/// ```toml
/// [limits]
/// memory = "64MB"   # per Lua state
/// cpu = "5s"        # CPU time a task may run without waiting
/// time = "0"        # wall-clock limit per run; 0 or "none" = no limit
/// store = "10MB"    # what one script may keep in `store`; 0 or "none" = no quota
/// requests_in_flight = 32  # requests to servers one script runs at once
/// outbox_items = 1000   # pending and failed uploads one script may keep
/// outbox_bytes = "16MB" # and their bytes
/// log_line = "4KB"  # longest print/log line kept
/// log_rate = 10     # lines a second per script, after a burst of
/// log_burst = 500
/// [state]
/// max_size = "none" # the state database's size limit for scripts' writes
/// min_free = "64MB" # free disk space scripts' writes leave
/// [log]
/// level = "info"
/// [nightscout.home]
/// url = "https://ns.example.org"
/// secret_env = "NS_API_SECRET"
/// [scripts."alerts.lua"]
/// trusted = true
/// ```
///
/// A missing file gives the defaults. Any unknown section or key, wrong type, or secret written
/// in clear is a `ConfigError` pointing at the line.
public struct HostConfig: Sendable {
    /// Resource limits for scripts (`[limits]`).
    public struct Limits: Sendable, Equatable {
        /// Memory one script's Lua state may allocate, in bytes (default 64 MiB).
        public var memoryBytes: Int
        /// CPU time a task may run without waiting, in seconds (default 5).
        public var cpuSeconds: Double
        /// Wall-clock limit for one run in seconds; `nil` for no limit (the default).
        public var timeSeconds: Double?
        /// Bytes of keys and values one script may keep in `store`; `nil` for no quota
        /// (default 10 MiB).
        public var storeBytes: Int?
        /// Requests to servers one script runs at once (default 32, see ``requestsInFlightRange``);
        /// more wait for a slot, and beyond eight times as many waiting they fail with `limit`.
        public var requestsInFlight = 32

        /// What `[limits] requests_in_flight` and `--requests-in-flight` accept.
        public static let requestsInFlightRange = 1...10_000

        /// Pending and failed outbox items one script may keep; `nil` for no limit (default 1000).
        public var outboxItems: Int? = 1000
        /// Bytes of pending and failed outbox bodies one script may keep; `nil` for no limit
        /// (default 16 MiB).
        public var outboxBytes: Int? = 16 << 20
        /// Bytes of one `print` or `log` line kept (the rest is cut with a marker); 0 for no
        /// limit (default 4 KiB).
        public var logLineBytes = 4 << 10
        /// Lines per second one script may print or log after its burst; 0 for no limit
        /// (default 10).
        public var logRate: Double = 10
        /// Lines one script may print or log at once before `logRate` applies (default 500).
        public var logBurst = 500

        /// The defaults: 64 MiB, 5 s of CPU, no wall-clock limit, 10 MiB of `store`, 1000 items
        /// or 16 MiB in the outbox, log lines of 4 KiB at 10 a second after a burst of 500.
        public static let defaults = Limits(memoryBytes: 64 << 20, cpuSeconds: 5, timeSeconds: nil)

        /// The smallest memory limit a script can start under (a Lua state with Lookout's modules
        /// needs about half of it); `[limits] memory` and `--memory-limit` refuse less, except 0
        /// ("none").
        public static let minimumMemoryBytes = 1 << 20

        /// Why `bytes` cannot be a memory limit (nil when it can: 0 for none, or at least the
        /// minimum); the message names the minimum and gives an example.
        public static func memoryLimitProblem(_ bytes: Int) -> String? {
            guard bytes != 0, bytes < minimumMemoryBytes else { return nil }
            return "\(bytes) bytes is too little for a script (the minimum is 1MB); "
                + "write a size with its unit such as \"64MB\", or 0 for no limit"
        }

        /// Creates limits.
        public init(memoryBytes: Int, cpuSeconds: Double, timeSeconds: Double?, storeBytes: Int? = 10 << 20) {
            self.memoryBytes = memoryBytes
            self.cpuSeconds = cpuSeconds
            self.timeSeconds = timeSeconds
            self.storeBytes = storeBytes
        }

        /// The `store` quota of each script, if any.
        public var storeQuota: StoreQuota? { storeBytes.map { StoreQuota(bytes: $0) } }
        /// The outbox quota of each script (nil when neither items nor bytes are limited).
        public var outboxQuota: OutboxQuota? {
            outboxItems == nil && outboxBytes == nil ? nil : OutboxQuota(items: outboxItems, bytes: outboxBytes)
        }
    }

    /// The state database's room (`[state]`): what scripts' own writes leave free for the guard
    /// and the audit log.
    public struct StateRoom: Sendable, Equatable {
        /// The most the database (with its write-ahead log) may grow to before scripts' writes
        /// are refused; `nil` for no limit (the default).
        public var maxSizeBytes: Int?
        /// Free disk space below which scripts' writes are refused (default 64 MiB).
        public var minFreeBytes: Int = 64 << 20

        /// The defaults: no size limit, 64 MiB kept free.
        public static let defaults = StateRoom()

        /// Room with the given limits.
        public init(maxSizeBytes: Int? = nil, minFreeBytes: Int = 64 << 20) {
            self.maxSizeBytes = maxSizeBytes
            self.minFreeBytes = minFreeBytes
        }
    }

    /// Log levels of `[log] level`, least to most severe; raw values match swift-log's
    /// `Logger.Level` (`Logger.Level(rawValue: level.rawValue)`).
    public enum LogLevel: String, Sendable, CaseIterable, Comparable {
        /// Everything, including per-message tracing.
        case trace
        /// Debugging detail.
        case debug
        /// Normal operation (the default).
        case info
        /// Noteworthy events.
        case notice
        /// Something looks wrong.
        case warning
        /// An operation failed.
        case error
        /// The host cannot continue.
        case critical

        /// Orders by severity.
        public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// Settings for one script (`[scripts."<file>"]`).
    public struct ScriptSettings: Sendable, Equatable {
        /// Whether the scheduler may run the script with the `io` and `os` libraries.
        public var trusted: Bool
        /// The line of the script's table, if the config has one.
        public var line: Int?

        /// Creates settings; the default is untrusted.
        public init(trusted: Bool = false, line: Int? = nil) {
            self.trusted = trusted
            self.line = line
        }
    }

    /// The display name of the file used in messages (the path given to `load`, or the name
    /// given with the text).
    public let fileName: String
    /// The path the config was loaded from (even if the file does not exist); `nil` when built
    /// from text.
    public let filePath: String?
    /// Whether the config came from an existing file or text (`false`: defaults, no file).
    public let fileExists: Bool
    /// The whole parsed document (with secret references; never hand it to scripts, use
    /// `publicValue(path:)`).
    public internal(set) var table: TOMLTable
    /// The resource limits.
    public let limits: Limits
    /// The log level.
    public let logLevel: LogLevel
    /// The state database's room (`[state]`).
    public let stateRoom: StateRoom
    /// Directory against which relative `…_file` paths are resolved (`nil`: current directory).
    let baseDirectory: String?
    /// `table` without any `…_env`/`…_file` key, and URLs without user info or query values.
    var publicTable: TOMLTable
    /// The profiles that came from the state database's catalogue (`service.name`), not the file.
    public internal(set) var catalogueProfiles: Set<String> = []

    /// The services that have profiles: nightscout, signalk, northlight, garmin.
    public static var knownServices: [String] { HostConfigSchema.services }

    /// Every known top-level section, sorted.
    public static var knownSections: [String] { HostConfigSchema.sections.keys.sorted() }

    /// The defaults, as for a missing file.
    public init(fileName: String = "config.toml") {
        self.init(defaultsFor: fileName, filePath: nil)
    }

    private init(defaultsFor fileName: String, filePath: String?) {
        self.fileName = fileName
        self.filePath = filePath
        fileExists = false
        table = TOMLTable()
        limits = .defaults
        logLevel = .info
        stateRoom = .defaults
        baseDirectory = nil
        publicTable = TOMLTable()
    }

    /// Parses and validates config text.
    ///
    /// - Parameters:
    ///   - text: the TOML document.
    ///   - fileName: the name used in messages.
    ///   - baseDirectory: where relative secret file paths are resolved (default: current directory).
    public init(text: String, fileName: String = "config.toml", baseDirectory: String? = nil) throws(ConfigError) {
        try self.init(text: text, fileName: fileName, filePath: nil, baseDirectory: baseDirectory)
    }

    private init(text: String, fileName: String, filePath: String?, baseDirectory: String?) throws(ConfigError) {
        let table = try TOMLParser.parse(text, fileName: fileName)
        try HostConfigValidator(fileName: fileName).validate(table)
        self.fileName = fileName
        self.filePath = filePath
        self.fileExists = true
        self.table = table
        self.baseDirectory = baseDirectory
        self.publicTable = Self.redactingURLCredentials(Self.removingSecretReferences(table))

        var limits = Limits.defaults
        if let memory = table.value(atPath: ["limits", "memory"]) {
            limits.memoryBytes = HostConfigSchema.isUnlimitedSize(memory) ? 0 : Quantities.size(memory) ?? limits.memoryBytes
        }
        if let cpu = table.value(atPath: ["limits", "cpu"]).flatMap(Quantities.duration) {
            limits.cpuSeconds = cpu
        }
        if let time = table.value(atPath: ["limits", "time"]) {
            limits.timeSeconds = HostConfigSchema.isUnlimited(time) ? nil : Quantities.duration(time)
        }
        if let store = table.value(atPath: ["limits", "store"]) {
            limits.storeBytes = HostConfigSchema.isUnlimitedSize(store) ? nil : Quantities.size(store)
        }
        if let requests = table.value(atPath: ["limits", "requests_in_flight"])?.integerValue {
            limits.requestsInFlight = Int(requests)
        }

        func size(_ key: String, _ current: Int?) -> Int? {
            guard let value = table.value(atPath: ["limits", key]) else { return current }
            return HostConfigSchema.isUnlimitedSize(value) ? nil : Quantities.size(value)
        }
        limits.outboxItems = size("outbox_items", limits.outboxItems)
        limits.outboxBytes = size("outbox_bytes", limits.outboxBytes)
        limits.logLineBytes = size("log_line", limits.logLineBytes) ?? 0
        if let rate = table.value(atPath: ["limits", "log_rate"]) {
            limits.logRate = rate.doubleValue ?? rate.integerValue.map(Double.init) ?? 0
        }
        if let burst = table.value(atPath: ["limits", "log_burst"])?.integerValue { limits.logBurst = Int(burst) }
        self.limits = limits
        var room = StateRoom.defaults
        if let max = table.value(atPath: ["state", "max_size"]) {
            room.maxSizeBytes = HostConfigSchema.isUnlimitedSize(max) ? nil : Quantities.size(max)
        }
        if let free = table.value(atPath: ["state", "min_free"]) {
            room.minFreeBytes = HostConfigSchema.isUnlimitedSize(free) ? 0 : Quantities.size(free) ?? room.minFreeBytes
        }
        self.stateRoom = room
        let level = table.value(atPath: ["log", "level"])?.stringValue?.lowercased()
        self.logLevel = level.flatMap(LogLevel.init(rawValue:)) ?? .info
    }

    /// Loads the config file at `path`. A missing file gives the defaults; an unreadable file,
    /// invalid text or invalid settings throw. Messages name the file as `path`.
    public static func load(path: String) throws(ConfigError) -> HostConfig {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return HostConfig(defaultsFor: path, filePath: path)
        }
        guard !isDirectory.boolValue else { throw ConfigError(file: path, message: "is a directory, not a file") }
        guard let data = manager.contents(atPath: path) else {
            throw ConfigError(file: path, message: "cannot be read")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: path, message: "is not UTF-8 text")
        }
        let directory = (path as NSString).deletingLastPathComponent
        return try HostConfig(
            text: text, fileName: path, filePath: path,
            baseDirectory: directory.isEmpty ? nil : directory)
    }

    /// Loads `paths.configFile` (see `load(path:)`).
    public static func load(paths: LookoutPaths) throws(ConfigError) -> HostConfig {
        try load(path: paths.configFile)
    }

    // MARK: Profiles and scripts

    /// The profile names configured for a service (or any profile-like section), sorted.
    public func profiles(service: String) -> [String] {
        guard let section = table[service]?.tableValue else { return [] }
        return section.entries.filter { $0.value.tableValue != nil }.map(\.key).sorted()
    }

    /// One profile, or `nil` if the config has no `[service.name]`.
    public func profile(service: String, name: String) -> Profile? {
        guard let entry = table.entry(atPath: [service, name]), let raw = entry.value.tableValue else {
            return nil
        }
        let source = catalogueProfiles.contains(service + "." + name) ? HostConfig.catalogueName : fileName
        return Profile(service: service, name: name, fileName: source, line: entry.line, raw: raw)
    }

    /// The settings for a script file. The key `[scripts."X"]` matches a file that is `X` or ends
    /// in `/X` (so `"alerts.lua"` matches `Scripts/alerts.lua`); the longest matching key wins.
    /// Without a match: untrusted.
    public func scriptSettings(file: String) -> ScriptSettings {
        guard let best = scriptEntry(file: file) else { return ScriptSettings() }
        let trusted = best.value.tableValue?["trusted"]?.boolValue ?? false
        return ScriptSettings(trusted: trusted, line: best.line)
    }

    /// The `[scripts."X"]` entry for a script file (see ``scriptSettings(file:)``).
    public func scriptEntry(file: String) -> TOMLTable.Entry? {
        guard let scripts = table["scripts"]?.tableValue else { return nil }
        let matches = scripts.entries.filter { entry in
            !entry.key.isEmpty && (file == entry.key || file.hasSuffix("/" + entry.key))
        }
        return matches.max(by: { $0.key.count < $1.key.count })
    }

    // MARK: What scripts may see

    /// The value at a dotted path written in TOML key syntax (`"nightscout.home.url"`,
    /// `scripts."alerts.lua".trusted`; `""` is the whole config), with every `…_env` and `…_file`
    /// key removed from tables: scripts never learn where secrets are. URLs lose their user info and
    /// query values (`https://‹redacted›@host/?token=‹redacted›`, as `Redaction.urlText` does for
    /// doctor): a credential written into an address is not the script's to read. `nil` if absent
    /// or invalid.
    public func publicValue(path: String) -> TOMLValue? {
        guard let components = TOMLParser.parseKeyPath(path) else { return nil }
        return publicTable.value(atPath: components)
    }

    static func removingSecretReferences(_ table: TOMLTable) -> TOMLTable {
        var result = TOMLTable()
        for var entry in table.entries where HostConfigSecrets.referenceKind(entry.key) == nil {
            entry.value = removingSecretReferences(entry.value)
            result.set(entry)
        }
        return result
    }

    /// `table` with every string that is a URL with user info or a query redacted.
    static func redactingURLCredentials(_ table: TOMLTable) -> TOMLTable {
        var result = TOMLTable()
        for var entry in table.entries {
            entry.value = redactingURLCredentials(entry.value)
            result.set(entry)
        }
        return result
    }

    static func redactingURLCredentials(_ value: TOMLValue) -> TOMLValue {
        switch value {
        case .string(let text): return .string(Redaction.displayText(text))
        case .table(let table): return .table(redactingURLCredentials(table))
        case .array(let elements): return .array(elements.map(redactingURLCredentials))
        default: return value
        }
    }

    static func removingSecretReferences(_ value: TOMLValue) -> TOMLValue {
        switch value {
        case .table(let table): return .table(removingSecretReferences(table))
        case .array(let elements): return .array(elements.map(removingSecretReferences))
        default: return value
        }
    }
}
