import Foundation
import LookoutTestSupport
import XCTest

/// Time zones on a host without `/usr/share/zoneinfo` (a minimal Debian root without tzdata):
/// Foundation's `DateFormatter` trapped there (exit 132, the whole host) on a named zone, so a
/// script's `chart.plot{tz = ...}` killed `lookout`. The real binary runs in a mount namespace
/// with an empty tmpfs over `/usr/share/zoneinfo`; the zones come from the ICU data linked in.
final class ZoneinfoMissingTests: CLITestCase, @unchecked Sendable {
    func testChartTimeZonesWorkWithoutZoneinfo() throws {
        let cases: [(script: String, tz: String?, expected: String)] = [
            // 1970-01-01 00:00 UTC is 05:30 in Kolkata.
            ("print(require('chart').plot({{0, 100}, {3600000, 120}}, {tz = 'Asia/Kolkata', width = 30, height = 4}))",
             nil, "05:30"),
            // The default zone is the computer's ($TZ), named too.
            ("print(require('chart').plot({{0, 100}, {3600000, 120}}, {width = 30, height = 4}))", "Asia/Kolkata", "05:30"),
            // Two days: the day in the label; St John's is 3:30 behind UTC.
            ("print(require('chart').svg({{0, 100}, {2 * 86400000, 120}}, {tz = 'America/St_Johns'}))", nil, "Dec 31 20:30"),
            // An unknown zone stays a clear error naming it, not a trap.
            ("print(pcall(require('chart').plot, {{0, 100}, {3600000, 120}}, {tz = 'Mars/Olympus_Mons'}))", nil,
             "opts.tz: unknown time zone 'Mars/Olympus_Mons'"),
        ]
        for (script, tz, expected) in cases {
            let result = try runWithoutZoneinfo(script, tz: tz)
            XCTAssertEqual(result.exitCode, 0, "\(script)\n\(result)")
            XCTAssertTrue(result.stdout.contains(expected), "\(script): no '\(expected)' in\n\(result)")
        }
    }

    /// Runs `lookout run script.lua` with an empty `/usr/share/zoneinfo` (a new mount namespace:
    /// root, or `sudo -n`, as the cluster partition test does).
    private func runWithoutZoneinfo(_ source: String, tz: String?) throws -> ProcessResult {
        guard let privileged = ClusterPartitionTests.privileged else {
            throw skipTest("a mount namespace needs root, or sudo without a password (.ci/run has one of them)")
        }
        let binary = try LookoutBinary.require()
        try writeFile("script.lua", source)
        let env = environment(tz.map { ["TZ": $0] } ?? [:])
        // Exit 97: the tmpfs did not hide the zone files, and the run would prove nothing.
        let hide = "mount -t tmpfs none /usr/share/zoneinfo && ! test -e /usr/share/zoneinfo/Asia/Kolkata || exit 97; exec \"$@\""
        let process = try ChildProcess.spawn(
            executable: privileged[0],
            arguments: Array(privileged.dropFirst()) + ["/usr/bin/env"] + env.map { "\($0.key)=\($0.value)" }
                + ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", hide, "sh", binary, "run", "script.lua"],
            environment: env, directory: work)
        process.closeInput()
        let result = try XCTUnwrap(process.waitForExit(timeout: 60))
        XCTAssertNotEqual(result.exitCode, 97, "could not hide /usr/share/zoneinfo behind a tmpfs: \(result)")
        return result
    }
}
