import Foundation
import XCTest

/// The one way a Lookout test says it cannot run here. Normally an `XCTSkip` with the reason, so
/// the test shows as skipped; with `LOOKOUT_FAIL_ON_SKIP=1` in the environment (what `.ci/run`
/// sets) an error instead, so the test fails: CI never passes with a test that did not run.
///
/// Use it as `throw skipTest("python3 is not on PATH")`. No test calls `XCTSkip` directly
/// (`.ci/run` checks that).
public func skipTest(_ reason: String, file: StaticString = #filePath, line: UInt = #line) -> any Error {
    if failOnSkip {
        return SkipNotAllowed(reason: reason, file: "\(file)", line: line)
    }
    return XCTSkip(reason, file: file, line: line)
}

/// Whether `LOOKOUT_FAIL_ON_SKIP` asks for skips to fail (any value but empty, `0`, `false`, `no`).
public var failOnSkip: Bool {
    guard let value = ProcessInfo.processInfo.environment["LOOKOUT_FAIL_ON_SKIP"]?.lowercased() else { return false }
    return !["", "0", "false", "no"].contains(value)
}

/// A skip turned into a failure by `LOOKOUT_FAIL_ON_SKIP`.
public struct SkipNotAllowed: Error, CustomStringConvertible {
    /// Why the test could not run.
    public var reason: String
    /// Where the test asked to skip.
    public var file: String
    /// The line of that call.
    public var line: UInt
    /// The failure text XCTest prints.
    public var description: String {
        "skipped, and LOOKOUT_FAIL_ON_SKIP is set (CI runs every test): \(reason) [\(file):\(line)]"
    }
}
