import Foundation
import Lua
// The shape of the host configuration: which top-level sections exist and what they may hold.
// To add a section, add a line to `HostConfigSchema.sections` (and, for typed access, a property
// on HostConfig). Validation and "did you mean" messages follow from the table.

/// What a top-level section of the host config holds.
enum HostConfigSectionKind: Sendable {
    /// One table of fixed keys: `[limits]`, `[log]`.
    case settings([HostConfigKeySpec])
    /// Named profiles with free-form keys and secret references: `[nightscout.home]`.
    case profiles
    /// One table of fixed keys per name: `[scripts."alerts.lua"]`.
    case named([HostConfigKeySpec])
}

/// One known key of a settings section and how its value is checked.
struct HostConfigKeySpec: Sendable {
    /// The key as written in the file.
    let name: String
    /// `nil` if the value is acceptable, otherwise the message (without location).
    let validate: @Sendable (TOMLValue) -> String?
}

/// The known sections and keys.
enum HostConfigSchema {
    /// The services that have profiles.
    static let services = ["nightscout", "signalk", "northlight", "garmin"]

    /// Every top-level section by name.
    static let sections: [String: HostConfigSectionKind] = {
        var sections: [String: HostConfigSectionKind] = [
            "limits": .settings([
                HostConfigKeySpec(name: "memory", validate: checkMemoryLimit),
                HostConfigKeySpec(name: "cpu", validate: checkPositiveDuration),
                HostConfigKeySpec(name: "time", validate: checkOptionalDuration),
                HostConfigKeySpec(name: "store", validate: checkOptionalSize),
                HostConfigKeySpec(name: "requests_in_flight", validate: checkRequestsInFlight),
                HostConfigKeySpec(name: "outbox_items", validate: checkOptionalCount),
                HostConfigKeySpec(name: "outbox_bytes", validate: checkOptionalSize),
                HostConfigKeySpec(name: "log_line", validate: checkOptionalSize),
                HostConfigKeySpec(name: "log_rate", validate: checkRate),
                HostConfigKeySpec(name: "log_burst", validate: checkCount),
            ]),
            "log": .settings([
                HostConfigKeySpec(name: "level", validate: checkLogLevel)
            ]),
            "serve": .settings([
                HostConfigKeySpec(name: "timezone", validate: checkTimeZone),
                HostConfigKeySpec(name: "scripts", validate: checkPathList),
                HostConfigKeySpec(name: "status_port", validate: checkPort),
                HostConfigKeySpec(name: "hosts", validate: HostConfig.checkServeHosts),
                HostConfigKeySpec(name: "public_url", validate: HostConfig.checkPublicURL),
                HostConfigKeySpec(name: "bind", validate: HostConfig.checkServeBind),
                HostConfigKeySpec(name: "web", validate: HostConfig.checkServeWeb),
            ]),
            "state": .settings(stateKeys),  // HostConfig+State.swift
            "scripts": .named([
                HostConfigKeySpec(name: "trusted", validate: checkBoolean),
                HostConfigKeySpec(name: "settings", validate: { $0.tableValue == nil ? "expected a table of the script's settings" : nil }),
            ]),
        ]
        for service in services { sections[service] = .profiles }
        sections["notify"] = .profiles  // notification channels: [notify.NAME] type = "ntfy", …
        return sections
    }()

    // MARK: Value checks

    /// How a value is named after "got": strings are quoted (they are never secrets here),
    /// other kinds are named ("a boolean").
    static func shown(_ value: TOMLValue) -> String {
        if case .string = value { return value.description }
        return value.kindDescription
    }

    /// A memory limit: a size of at least `Limits.minimumMemoryBytes`, or 0 or "none" for none.
    static func checkMemoryLimit(_ value: TOMLValue) -> String? {
        if isUnlimitedSize(value) { return nil }
        guard let bytes = Quantities.size(value) else {
            return "expected a size such as \"64MB\" or \"1GB\" (powers of 1024), or 0 or \"none\" for no limit, got \(shown(value))"
        }
        return HostConfig.Limits.memoryLimitProblem(bytes)
    }

    /// A size, or 0 or "none" for no limit.
    static func checkOptionalSize(_ value: TOMLValue) -> String? {
        if isUnlimitedSize(value) || Quantities.size(value) != nil { return nil }
        return "expected a size such as \"10MB\" or \"512KB\" (powers of 1024), or 0 or \"none\" for no limit, got \(shown(value))"
    }

    /// A whole number of at least 0, or "none" (0 and "none": no limit).
    static func checkOptionalCount(_ value: TOMLValue) -> String? {
        if let text = value.stringValue, text.lowercased() == "none" { return nil }
        return checkCount(value).map { _ in "expected a whole number such as 1000, or 0 or \"none\" for no limit, got \(shown(value))" }
    }

    /// A whole number of at least 0.
    static func checkCount(_ value: TOMLValue) -> String? {
        guard let n = value.integerValue, n >= 0 else { return "expected a whole number of at least 0, got \(shown(value))" }
        return nil
    }

    /// Lines a second: a number of at least 0 (0: no limit).
    static func checkRate(_ value: TOMLValue) -> String? {
        let rate = value.doubleValue ?? value.integerValue.map(Double.init)
        guard let rate, rate.isFinite, rate >= 0 else {
            return "expected lines a second such as 10 or 0.5 (0 for no limit), got \(shown(value))"
        }
        return nil
    }

    /// `0`, `"0"` or `"none"`: no size limit.
    static func isUnlimitedSize(_ value: TOMLValue) -> Bool {
        if let text = value.stringValue, text.lowercased() == "none" { return true }
        return Quantities.size(value) == 0
    }

    static func checkPositiveDuration(_ value: TOMLValue) -> String? {
        guard let seconds = Quantities.duration(value) else {
            return "expected a duration such as \"5s\", \"250ms\" or \"1m\", got \(shown(value))"
        }
        return seconds > 0 ? nil : "must be longer than 0 seconds"
    }

    static func checkOptionalDuration(_ value: TOMLValue) -> String? {
        if isUnlimited(value) || Quantities.duration(value) != nil { return nil }
        return "expected a duration such as \"30s\" or \"5m\", or 0 or \"none\" for no limit, got \(shown(value))"
    }

    /// `0`, `0.0`, `"0"` or `"none"`: no limit.
    static func isUnlimited(_ value: TOMLValue) -> Bool {
        if let text = value.stringValue, text.lowercased() == "none" { return true }
        return Quantities.duration(value) == 0
    }

    static func checkLogLevel(_ value: TOMLValue) -> String? {
        let names = HostConfig.LogLevel.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = value.stringValue else { return "expected one of \(names), got \(shown(value))" }
        if HostConfig.LogLevel(rawValue: text.lowercased()) != nil { return nil }
        let guess = ConfigWording.suggestion(for: text, among: HostConfig.LogLevel.allCases.map(\.rawValue))
        let hint = guess.map { "; did you mean \"\($0)\"?" } ?? ""
        return "expected one of \(names), got \(shown(value))\(hint)"
    }

    static func checkTimeZone(_ value: TOMLValue) -> String? {
        guard let text = value.stringValue else { return "expected a time zone such as \"Europe/Berlin\", got \(shown(value))" }
        return TimeZone(identifier: text) == nil ? "unknown time zone \(shown(value)); use an IANA name such as \"Europe/Berlin\" or \"UTC\"" : nil
    }

    static func checkPathList(_ value: TOMLValue) -> String? {
        if let text = value.stringValue { return text.isEmpty ? "expected a path, got an empty string" : nil }
        if case .array(let items) = value, !items.isEmpty, items.allSatisfy({ !($0.stringValue ?? "").isEmpty }) { return nil }
        return "expected a folder or file path, or an array of paths, got \(shown(value))"
    }

    /// A whole number of requests in ``HostConfig/Limits/requestsInFlightRange``.
    static func checkRequestsInFlight(_ value: TOMLValue) -> String? {
        let range = HostConfig.Limits.requestsInFlightRange
        guard case .integer(let count) = value, range.contains(Int(count)) else {
            return "expected a whole number of requests from \(range.lowerBound) to \(range.upperBound), got \(shown(value))"
        }
        return nil
    }

    static func checkPort(_ value: TOMLValue) -> String? {
        guard case .integer(let port) = value, (0...65535).contains(port) else {
            return "expected a port number 0-65535 (0 = no status endpoint), got \(shown(value))"
        }
        return nil
    }

    static func checkBoolean(_ value: TOMLValue) -> String? {
        value.boolValue == nil ? "expected true or false, got \(shown(value))" : nil
    }
}

/// Validation of a parsed document against `HostConfigSchema`.
struct HostConfigValidator {
    let fileName: String

    func error(_ entry: TOMLTable.Entry, atValue: Bool, _ path: [String], _ message: String) -> ConfigError {
        ConfigError(
            file: fileName, line: atValue ? entry.valueLine : entry.line,
            column: atValue ? entry.valueColumn : entry.column,
            keyPath: ConfigWording.keyPath(path), message: message)
    }

    func validate(_ root: TOMLTable) throws(ConfigError) {
        for entry in root.entries {
            guard let kind = HostConfigSchema.sections[entry.key] else {
                let hint = ConfigWording.unknownNameHint(
                    entry.key, known: Array(HostConfigSchema.sections.keys), render: { "[\($0)]" })
                throw error(entry, atValue: false, [entry.key], "unknown section [\(entry.key)]\(hint)")
            }
            guard case .table(let section) = entry.value else {
                let example = kind.isProfiles ? "[\(entry.key).<profile>]" : "[\(entry.key)]"
                throw error(
                    entry, atValue: true, [entry.key],
                    "expected a table \(example), got \(HostConfigSchema.shown(entry.value))")
            }
            switch kind {
            case .settings(let specs):
                try validateSettings(section, path: [entry.key], specs: specs)
            case .named(let specs):
                for item in section.entries {
                    guard case .table(let settings) = item.value else {
                        throw error(
                            item, atValue: true, [entry.key, item.key],
                            "expected a table [\(entry.key).\(ConfigWording.quotedKey(item.key))], "
                                + "got \(HostConfigSchema.shown(item.value))")
                    }
                    try validateSettings(settings, path: [entry.key, item.key], specs: specs)
                }
            case .profiles:
                for item in section.entries {
                    guard case .table(let profile) = item.value else {
                        throw error(
                            item, atValue: true, [entry.key, item.key],
                            "expected a profile table such as [\(entry.key).home], got "
                                + HostConfigSchema.shown(item.value))
                    }
                    try validateProfile(profile, path: [entry.key, item.key], depth: 0)
                }
            }
        }
    }

    func validateSettings(_ table: TOMLTable, path: [String], specs: [HostConfigKeySpec]) throws(ConfigError) {
        for entry in table.entries {
            guard let spec = specs.first(where: { $0.name == entry.key }) else {
                let hint = ConfigWording.unknownNameHint(entry.key, known: specs.map(\.name), render: { $0 })
                let section = "[" + ConfigWording.keyPath(path) + "]"
                throw error(entry, atValue: false, path + [entry.key], "unknown key \(entry.key) in \(section)\(hint)")
            }
            if let message = spec.validate(entry.value) {
                throw error(entry, atValue: true, path + [entry.key], message)
            }
        }
    }

    /// Profile keys are free-form, but: secrets only by reference, `…_env` names a variable,
    /// `…_file` names a path, and values are scalars or arrays/tables of scalars.
    func validateProfile(_ table: TOMLTable, path: [String], depth: Int) throws(ConfigError) {
        for entry in table.entries {
            let keyPath = path + [entry.key]
            switch HostConfigSecrets.referenceKind(entry.key) {
            case .environment(let name):
                guard !name.isEmpty else {
                    throw error(entry, atValue: false, keyPath, "the key must name a secret, such as secret_env")
                }
                guard let variable = entry.value.stringValue else {
                    throw error(
                        entry, atValue: true, keyPath,
                        "expected the name of an environment variable, such as \"NS_API_SECRET\", got "
                            + entry.value.kindDescription)
                }
                guard HostConfigSecrets.isVariableName(variable) else {
                    // Never echo the value: people paste the secret itself here by mistake.
                    throw error(
                        entry, atValue: true, keyPath,
                        "expected the name of an environment variable (letters, digits and _, such as "
                            + "\"NS_API_SECRET\"); put the secret itself in that variable")
                }
                continue
            case .file(let name):
                guard !name.isEmpty else {
                    throw error(entry, atValue: false, keyPath, "the key must name a secret, such as secret_file")
                }
                guard let file = entry.value.stringValue, !file.isEmpty else {
                    throw error(
                        entry, atValue: true, keyPath,
                        "expected the path of a file holding the secret, got "
                            + (entry.value.stringValue == nil ? entry.value.kindDescription : "an empty string"))
                }
                continue
            case .none:
                break
            }
            if HostConfigSecrets.isSecretName(entry.key) {
                // Reported at the line only; the message never includes the value.
                throw ConfigError(
                    file: fileName, line: entry.line, keyPath: ConfigWording.keyPath(keyPath),
                    message: "secrets are not written in the config; use \(entry.key)_env = \"VAR\" "
                        + "or \(entry.key)_file = \"PATH\"")
            }
            let nesting = "profile values must be scalars, or arrays and tables of scalars"
            switch entry.value {
            case .array(let elements):
                if !elements.allSatisfy(\.isScalar) { throw error(entry, atValue: true, keyPath, nesting) }
            case .table(let inner):
                if depth > 0 { throw error(entry, atValue: true, keyPath, nesting) }
                try validateProfile(inner, path: keyPath, depth: depth + 1)
            default:
                break
            }
        }
    }
}

extension HostConfigSectionKind {
    var isProfiles: Bool {
        if case .profiles = self { return true }
        return false
    }
}
