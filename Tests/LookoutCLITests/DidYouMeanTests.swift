import Foundation
import XCTest

/// A mistyped subcommand or option gets a did-you-mean naming the right one.
final class DidYouMeanTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testAMistypedSubcommandIsNamed() throws {
        let run = try lookout(["tset"])
        assertExit(run, 2)
        XCTAssertTrue(run.stderr.contains("did you mean 'test'? (see `lookout --help`)"), run.stderr)
    }

    func testAMistypedNestedSubcommandIsNamed() throws {
        let run = try lookout(["sim", "nightscot"])
        assertExit(run, 2)
        XCTAssertTrue(run.stderr.contains("did you mean 'nightscout'? (see `lookout sim --help`)"), run.stderr)
    }

    func testAMistypedOptionIsNamed() throws {
        let run = try lookout(["demo", "--stpe", "1"])
        assertExit(run, 2)
        XCTAssertTrue(run.stderr.contains("did you mean '--step'? (see `lookout demo --help`)"), run.stderr)
    }

    func testNothingCloseMeansNoGuess() throws {
        let run = try lookout(["zzzzzzzz"])
        assertExit(run, 2)
        XCTAssertFalse(run.stderr.contains("did you mean"), run.stderr)
    }
}
