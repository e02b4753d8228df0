import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DeviceInfo {
    /// Reads the device description of this machine. Reads only model, OS, locale, terminal size,
    /// memory, battery and link type; never the host name, user, addresses or serial numbers.
    /// - Parameters:
    ///   - appVersion: the app's version.
    ///   - root: a directory standing in for `/` when reading `/sys`, `/proc` and `/etc` (tests).
    ///   - environment: where the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`) and a terminal size
    ///     (`COLUMNS`, `LINES`) are read when stdout is not a terminal.
    public static func current(appVersion: String, root: String = "",
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> DeviceInfo {
        let probe = HostProbe(root: root, environment: environment)
        return DeviceInfo(model: probe.model(), osVersion: probe.osVersion(), appVersion: appVersion,
                          screenResolution: probe.terminalSize(), locale: probe.locale(),
                          freeMemory: probe.freeMemory().map(DeviceInfo.formatMemory(bytes:)),
                          batteryLevel: probe.batteryLevel(), networkType: probe.networkType())
    }
}

/// Reads the host's facts. Linux reads `/sys` and `/proc`; macOS uses `sysctl`.
struct HostProbe {
    let root: String
    let environment: [String: String]

    func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: root + path),
              let text = String(data: data, encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    func list(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + path)) ?? []).sorted()
    }

    /// `uname` fields: system name, release, machine.
    static func uname() -> (system: String, release: String, machine: String) {
        var name = utsname()
        _ = Foundation.uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return (field(name.sysname), field(name.release), field(name.machine))
    }

    /// Placeholders firmware puts in DMI fields.
    static let placeholders = ["to be filled by o.e.m.", "system product name", "default string", "not specified", "none"]

    func model() -> String {
        let machine = Self.uname().machine
        #if os(macOS)
        if let model = Self.sysctlString("hw.model") { return "\(model) (\(machine))" }
        #else
        if let product = read("/sys/devices/virtual/dmi/id/product_name"),
           !Self.placeholders.contains(product.lowercased()) {
            return "\(product) (\(machine))"
        }
        if let model = read("/proc/device-tree/model")?.trimmingCharacters(in: CharacterSet(charactersIn: "\0")) {
            return "\(model) (\(machine))"
        }
        #endif
        return machine
    }

    func osVersion() -> String {
        let u = Self.uname()
        #if os(macOS)
        let v = ProcessInfo.processInfo.operatingSystemVersion
        return "macOS \(v.majorVersion).\(v.minorVersion).\(v.patchVersion), \(u.system) \(u.release)"
        #else
        let pretty = read("/etc/os-release")?.split(separator: "\n")
            .first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"'")) }
        return (pretty.map { $0 + ", " } ?? "") + "\(u.system) \(u.release)"
        #endif
    }

    func locale() -> String {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[key], !value.isEmpty {
                let name = value.split(separator: ".").first.map(String.init) ?? value
                return name.split(separator: "@").first.map(String.init) ?? name
            }
        }
        return Locale.current.identifier.isEmpty ? "C" : Locale.current.identifier
    }

    func terminalSize() -> String? {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return "\(size.ws_col)x\(size.ws_row)"
        }
        if let c = environment["COLUMNS"].flatMap(Int.init), let r = environment["LINES"].flatMap(Int.init), c > 0, r > 0 {
            return "\(c)x\(r)"
        }
        return nil
    }

    func freeMemory() -> UInt64? {
        #if os(macOS)
        guard let free = Self.sysctlInt("vm.page_free_count") else { return nil }
        return UInt64(free) * UInt64(getpagesize())
        #else
        guard let line = read("/proc/meminfo")?.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ UInt64($0) }) else { return nil }
        return kib * 1024
        #endif
    }

    /// The first battery's charge (Linux `power_supply/*/capacity` of type `Battery`).
    func batteryLevel() -> Double? {
        #if os(macOS)
        return nil  // IOKit's power-source API is not used: no battery level on macOS yet.
        #else
        for supply in list("/sys/class/power_supply") where read("/sys/class/power_supply/\(supply)/type") == "Battery" {
            if let capacity = read("/sys/class/power_supply/\(supply)/capacity").flatMap(Double.init), capacity >= 0 {
                return min(100, capacity) / 100
            }
        }
        return nil
        #endif
    }

    /// The kind of the first link that is up: `wifi` (a `wireless` or `phy80211` entry),
    /// `cellular` (`wwan*`), `ethernet`, or `none` when only loopback is up.
    func networkType() -> String? {
        #if os(macOS)
        return nil  // SystemConfiguration is not used: no link type on macOS yet.
        #else
        let interfaces = list("/sys/class/net")
        guard !interfaces.isEmpty else { return nil }
        var kinds: [String] = []
        for interface in interfaces where interface != "lo" {
            let base = "/sys/class/net/\(interface)"
            guard read(base + "/operstate") == "up" else { continue }
            if FileManager.default.fileExists(atPath: root + base + "/wireless")
                || FileManager.default.fileExists(atPath: root + base + "/phy80211") {
                kinds.append("wifi")
            } else if interface.hasPrefix("wwan") {
                kinds.append("cellular")
            } else if read(base + "/type") == "1" {
                kinds.append("ethernet")
            }
        }
        return ["wifi", "ethernet", "cellular"].first(where: kinds.contains) ?? "none"
        #endif
    }

    #if os(macOS)
    static func sysctlString(_ name: String) -> String? {
        var size = 0
        guard sysctlbyname(name, nil, &size, nil, 0) == 0, size > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: size)
        guard sysctlbyname(name, &buffer, &size, nil, 0) == 0 else { return nil }
        return String(cString: buffer)
    }

    static func sysctlInt(_ name: String) -> Int64? {
        var value: Int64 = 0
        var size = MemoryLayout<Int64>.size
        guard sysctlbyname(name, &value, &size, nil, 0) == 0 else { return nil }
        return size == 4 ? Int64(Int32(truncatingIfNeeded: value)) : value
    }
    #endif
}
