import Foundation
@testable import LookoutAutomation
import XCTest

/// Serve's release of the binary's start-up pages: only clean, read-only mappings of the
/// executable, and the process keeps running on what is mapped again.
final class StartupPagesTests: XCTestCase {
    private let smaps = """
        55d0a0000000-55d0a0a00000 r--p 00000000 fe:00 42                         /usr/bin/lookout
        Size:              10240 kB
        Rss:                3400 kB
        Anonymous:             0 kB
        VmFlags: rd mr mw me
        55d0a0a00000-55d0a3000000 r-xp 00a00000 fe:00 42                         /usr/bin/lookout
        Size:              38912 kB
        Rss:               25000 kB
        AnonHugePages:         0 kB
        Anonymous:             0 kB
        VmFlags: rd ex mr mw me
        55d0a3000000-55d0a3200000 r--p 03000000 fe:00 42                         /usr/bin/lookout
        Size:               2048 kB
        Rss:                1500 kB
        Anonymous:          1496 kB
        VmFlags: rd mr mw me ac
        55d0a3200000-55d0a5800000 rw-p 03200000 fe:00 42                         /usr/bin/lookout
        Size:              38912 kB
        Anonymous:           608 kB
        7f0000000000-7f0000100000 r-xp 00000000 fe:00 77                         /usr/lib/x86_64-linux-gnu/libc.so.6
        Anonymous:             0 kB
        7f0000200000-7f0000300000 r-xp 00000000 fe:00 43                         /opt/My Tools/lookout (deleted)
        Anonymous:             0 kB
        """

    func testOnlyTheExecutablesCleanReadOnlyMappingsAreChosen() {
        let ranges = StartupPages.cleanReadOnlyMappings(smaps: smaps, of: "/usr/bin/lookout")
        // Not the relocated RELRO (it has copied pages), not the data, not libc.
        XCTAssertEqual(ranges, [0x55d0_a000_0000..<0x55d0_a0a0_0000, 0x55d0_a0a0_0000..<0x55d0_a300_0000])
        XCTAssertEqual(StartupPages.cleanReadOnlyMappings(smaps: smaps, of: "/opt/My Tools/lookout (deleted)"),
                       [0x7f00_0020_0000..<0x7f00_0030_0000])
    }

    /// In this test process: its own code pages leave the resident set, and it runs on.
    func testReleasingDropsResidentCodePagesAndTheProcessRunsOn() throws {
        let before = try residentCodeKilobytes()
        XCTAssertGreaterThan(before, 1024, "the test binary's code should be resident")
        XCTAssertGreaterThan(StartupPages.release(), 0)
        let after = try residentCodeKilobytes()
        XCTAssertLessThan(after, before / 2, "resident code \(before) kB before the release, \(after) kB after")
        // Code and relocated data still work: JSON, a closure through a protocol, Foundation.
        let data = try JSONSerialization.data(withJSONObject: ["a": [1, 2, 3]])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"a":[1,2,3]}"#)
        XCTAssertEqual([3, 1, 2].sorted(by: <), [1, 2, 3])
    }

    /// Resident kilobytes of this process's executable mappings that are not writable.
    private func residentCodeKilobytes() throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let text = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
        var total = 0
        var inside = false
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.split(separator: "-").count == 2, fields.count >= 6 {
                inside = fields[5...].joined(separator: " ") == executable && !fields[1].contains("w")
            } else if inside, first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                total += kb
            }
        }
        return total
    }
}
