import Foundation
import NorthlightKit
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Device information: what is read, and that nothing personal is.
final class DeviceInfoTests: XCTestCase {
    static let allowedKeys: Set<String> = ["model", "os_version", "app_version", "screen_resolution", "locale", "free_memory",
                                           "battery_level", "network_type"]

    func testThisHostHasOnlyTheSeedFieldsAndNothingPersonal() throws {
        let info = DeviceInfo.current(appVersion: "1.2.3")
        let data = try JSONEncoder().encode(info)
        XCTAssertTrue(jsonKeys(data).isSubset(of: Self.allowedKeys), "\(jsonKeys(data))")
        XCTAssertEqual(info.appVersion, "1.2.3")
        XCTAssertFalse(info.model.isEmpty)
        XCTAssertFalse(info.osVersion.isEmpty)
        #if os(Linux)
        XCTAssertTrue(info.osVersion.contains("Linux"), info.osVersion)
        XCTAssertNotNil(info.freeMemory, "Linux always has /proc/meminfo")
        #endif

        let text = String(decoding: data, as: UTF8.self)
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count)
        let hostname = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let personal = [hostname, ProcessInfo.processInfo.hostName, ProcessInfo.processInfo.userName,
                        ProcessInfo.processInfo.environment["USER"] ?? "", NSHomeDirectory()]
        for value in personal where value.count >= 3 {
            XCTAssertFalse(text.contains(value), "device info contains \(value): \(text)")
        }
        let addressPattern = try NSRegularExpression(pattern: #"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|([0-9a-f]{2}:){5}[0-9a-f]{2}"#,
                                                     options: .caseInsensitive)
        XCTAssertEqual(addressPattern.numberOfMatches(in: text, range: NSRange(text.startIndex..., in: text)), 0, text)
    }

    /// A fake `/sys`, `/proc` and `/etc`: a battery at 75 %, Wi-Fi up, 2 GiB available.
    func testLinuxFactsAreReadFromSysAndProc() throws {
        let root = NSTemporaryDirectory() + "northlight-device-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        func write(_ path: String, _ text: String) throws {
            try FileManager.default.createDirectory(atPath: root + (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try text.write(toFile: root + path, atomically: true, encoding: .utf8)
        }
        try write("/sys/class/power_supply/AC/type", "Mains\n")
        try write("/sys/class/power_supply/BAT0/type", "Battery\n")
        try write("/sys/class/power_supply/BAT0/capacity", "75\n")
        try write("/sys/class/net/lo/operstate", "unknown\n")
        try write("/sys/class/net/eth0/operstate", "down\n")
        try write("/sys/class/net/eth0/type", "1\n")
        try write("/sys/class/net/wlan0/operstate", "up\n")
        try write("/sys/class/net/wlan0/type", "1\n")
        try FileManager.default.createDirectory(atPath: root + "/sys/class/net/wlan0/wireless", withIntermediateDirectories: true)
        try write("/proc/meminfo", "MemTotal:       8000000 kB\nMemAvailable:    2200000 kB\n")
        try write("/etc/os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n")
        try write("/sys/devices/virtual/dmi/id/product_name", "ThinkPad X1\n")

        let info = DeviceInfo.current(appVersion: "1", root: root, environment: ["LANG": "fi_FI.UTF-8", "COLUMNS": "100", "LINES": "30"])
        #if os(Linux)
        XCTAssertEqual(info.batteryLevel, 0.75)
        XCTAssertEqual(info.networkType, "wifi")
        XCTAssertEqual(info.freeMemory, "2GB")
        XCTAssertTrue(info.osVersion.hasPrefix("Debian GNU/Linux 12 (bookworm), Linux "), info.osVersion)
        XCTAssertTrue(info.model.hasPrefix("ThinkPad X1 ("), info.model)
        #endif
        XCTAssertEqual(info.locale, "fi_FI")
        if isatty(STDOUT_FILENO) == 0 { XCTAssertEqual(info.screenResolution, "100x30") }

        try write("/sys/class/net/wlan0/operstate", "down\n")
        XCTAssertEqual(DeviceInfo.current(appVersion: "1", root: root, environment: [:]).networkType, "none")
        XCTAssertEqual(DeviceInfo.formatMemory(bytes: 512 * 1024 * 1024), "512MB")
    }

    func testFeedbackCarriesOnlyTheFeedbackFields() throws {
        let data = try JSONEncoder().encode(fixedDevice.forFeedback)
        XCTAssertEqual(jsonKeys(data), ["model", "os_version", "app_version", "screen_resolution", "locale"])
    }
}
