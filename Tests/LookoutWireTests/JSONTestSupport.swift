import LookoutWire
import XCTest

/// Asserts `a` and `b` are equal and of the same kind (`==` compares numbers by value, so
/// `.int(1) == .double(1)`; the writer tells them apart: `1` vs `1.0`).
func assertIdentical(_ a: @autoclosure () throws -> JSONValue, _ b: JSONValue, _ message: String = "",
                     file: StaticString = #filePath, line: UInt = #line) {
    do {
        let a = try a()
        XCTAssertEqual(a, b, message, file: file, line: line)
        XCTAssertEqual(a.jsonString, b.jsonString, message, file: file, line: line)
    } catch {
        XCTFail("\(message): unexpected error \(error)", file: file, line: line)
    }
}
