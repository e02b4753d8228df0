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

    /// Pages this process wrote (copied on write, or anonymous) are never among those released;
    /// pages read from the file and pages never touched are.
    func testOnlyPagesStillBackedByTheFileAreReleased() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("startup-pages-\(getpid())").path
        try Data(repeating: 7, count: 8 * page).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        // A private, writable mapping of the file, as the executable's data segment is.
        let mapped = try XCTUnwrap(mmap(nil, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0))
        XCTAssertNotEqual(mapped, MAP_FAILED)
        defer { munmap(mapped, 8 * page) }
        let bytes = mapped.assumingMemoryBound(to: UInt8.self)
        var sum = 0
        for i in [0, 1, 4] { sum += Int(bytes[i * page]) }  // read: still the file's pages
        XCTAssertEqual(sum, 21)
        bytes[2 * page] = 9  // written: a copy of this process's own
        bytes[6 * page] = 9
        let base = Int(bitPattern: mapped)
        XCTAssertEqual(StartupPages.filePages(in: base..<base + 8 * page),
                       [base..<base + 2 * page, base + 3 * page..<base + 6 * page, base + 7 * page..<base + 8 * page])
    }

    func testTheConstantsSectionIsFoundInsideTheExecutablesMappings() throws {
        let constants = try XCTUnwrap(ExecutableSection.range(named: ".rodata"))
        let code = try XCTUnwrap(ExecutableSection.range(named: ".text"))
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8).split(separator: "\n").compactMap { line -> (Range<Int>, String)? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let bounds = fields[0].split(separator: "-").compactMap { Int($0, radix: 16) }
            guard fields.count >= 6, bounds.count == 2, fields[5...].joined(separator: " ") == executable else { return nil }
            return (bounds[0]..<bounds[1], String(fields[1]))
        }
        XCTAssertTrue(maps.contains { $0.0.contains(code.lowerBound) && $0.1.hasPrefix("r-x") }, "\(code) in \(maps)")
        XCTAssertTrue(maps.contains { $0.0.contains(constants.lowerBound) && $0.0.contains(constants.upperBound - 1) }, "\(constants) in \(maps)")
        XCTAssertNil(ExecutableSection.range(named: ".no-such-section"))
    }

    /// In this test process: its own code pages leave the resident set, and it runs on.
    func testReleasingDropsResidentCodePagesAndTheProcessRunsOn() throws {
        let constants = try XCTUnwrap(ExecutableSection.range(named: ".rodata"))
        let before = try residentCodeKilobytes(), constantsBefore = residentPages(in: constants)
        XCTAssertGreaterThan(before, 1024, "the test binary's code should be resident")
        XCTAssertGreaterThan(constantsBefore, 0, "some of the test binary's constants should be resident")
        XCTAssertGreaterThan(StartupPages.release(), 0)
        let after = try residentCodeKilobytes(), constantsAfter = residentPages(in: constants)
        XCTAssertLessThan(after, before / 2, "resident code \(before) kB before the release, \(after) kB after")
        XCTAssertLessThan(constantsAfter, constantsBefore / 2, "resident constants: \(constantsBefore) pages before, \(constantsAfter) after")
        // Code and relocated data still work: JSON, a closure through a protocol, Foundation.
        let data = try JSONSerialization.data(withJSONObject: ["a": [1, 2, 3]])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"a":[1,2,3]}"#)
        XCTAssertEqual([3, 1, 2].sorted(by: <), [1, 2, 3])
    }

    /// Pages of `range` mapped in this process (`/proc/self/pagemap`'s present bit).
    private func residentPages(in range: Range<Int>) -> Int {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = range.lowerBound / page, end = (range.upperBound + page - 1) / page
        guard let pagemap = FileHandle(forReadingAtPath: "/proc/self/pagemap"),
              (try? pagemap.seek(toOffset: UInt64(first * 8))) != nil,
              let data = try? pagemap.read(upToCount: (end - first) * 8) else { return 0 }
        return stride(from: 7, to: data.count, by: 8).filter { data[data.startIndex + $0] & 0x80 != 0 }.count
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
