import Foundation
import XCTest

/// How a finished `lookout` process ended and what it wrote.
struct ProcessResult: CustomStringConvertible {
    /// The exit status, or nil when a signal killed the process.
    var exitCode: Int32?
    /// The signal that killed the process, if one did.
    var signal: Int32?
    var stdout: String
    var stderr: String

    var description: String {
        let how = exitCode.map { "exit status \($0)" } ?? "killed by signal \(signal ?? -1)"
        return "\(how)\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)\n--------------"
    }
}

/// Finds the `lookout` executable the test target depends on.
enum LookoutBinary {
    /// Where the executable is looked for, in order.
    static var candidates: [String] {
        var list: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["LOOKOUT_BINARY"], !explicit.isEmpty {
            list.append(explicit)
        }
        // On Linux the test bundle is `.build/debug/LookoutPackageTests.xctest`, an executable next to
        // `lookout`; on macOS it is a bundle directory inside that same folder.
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        list.append(argument0.deletingLastPathComponent().appendingPathComponent("lookout").path)
        let main = Bundle.main.bundleURL.standardizedFileURL
        list.append(main.appendingPathComponent("lookout").path)
        list.append(main.deletingLastPathComponent().appendingPathComponent("lookout").path)
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            list.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("lookout").path)
        }
        // Tests/LookoutCLITests/ProcessRunner.swift → <package>/.build/debug/lookout
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        list.append(package.appendingPathComponent(".build/debug/lookout").path)
        return list
    }

    /// The absolute path of `lookout`, or nil.
    static let path: String? = {
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return nil
    }()

    /// The path, or a test failure naming every place tried.
    static func require(file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try XCTUnwrap(
            path,
            "cannot find the lookout executable (build with `swift build --build-tests`); tried:\n"
                + candidates.joined(separator: "\n"),
            file: file, line: line)
    }
}
