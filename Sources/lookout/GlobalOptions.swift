import Foundation

/// Options given before the command: `lookout -v run x.lua`, `lookout --verbose doctor`, or
/// `lookout -v` alone (the REPL). They hold for every command of this process and the processes it
/// starts (`serve`'s workers), through `LOOKOUT_VERBOSE=1`.
enum GlobalOptions {
    /// The environment variable that carries `-v` given before the command (also settable by hand).
    static let verboseVariable = "LOOKOUT_VERBOSE"

    /// `arguments` (without the program's name) less the leading `-v`/`--verbose`, and whether
    /// one was there. Only options before the first word count: after it they are the command's.
    static func split(_ arguments: [String]) -> (arguments: [String], verbose: Bool) {
        var rest = arguments[...]
        var verbose = false
        while let first = rest.first, first == "-v" || first == "--verbose" {
            verbose = true
            rest = rest.dropFirst()
        }
        return (Array(rest), verbose)
    }

    /// Records `-v` before the command for this process and its children (called once, before
    /// anything else runs).
    static func requestVerbose() {
        setenv(verboseVariable, "1", 1)
    }

    /// Whether `-v` was given before the command (or `LOOKOUT_VERBOSE=1` set).
    static var verbose: Bool {
        ProcessInfo.processInfo.environment[verboseVariable] == "1"
    }
}
