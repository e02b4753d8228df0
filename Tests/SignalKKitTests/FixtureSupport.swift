import Foundation
import LookoutTestSupport
import XCTest

/// Locates the Signal K fixtures (CC BY-SA 2.0, read at run time, never copied into the repo).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("../../../shared/fixtures/signalk")
        .standardizedFileURL

    static let deltaFiles = [
        "delta-meta.json", "delta-multi-update-with-root-path.json",
        "delta-multiple-sources.json", "delta-notifications.json",
    ]

    static func data(_ name: String) throws -> Data {
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw skipTest("Signal K fixture \(name) not found at \(url.path) (shared/fixtures/signalk is CC BY-SA and may have been removed)")
        }
        return try Data(contentsOf: url)
    }

    static func allJSONFiles() throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            throw skipTest("Signal K fixtures directory not found at \(directory.path)")
        }
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }
}

func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

func XCTAssertDate(_ d: Date?, _ seconds: Double, file: StaticString = #filePath, line: UInt = #line) {
    guard let d else { return XCTFail("date is nil", file: file, line: line) }
    XCTAssertEqual(d.timeIntervalSince1970, seconds, accuracy: 0.0005, file: file, line: line)
}
