import Foundation
import XCTest
@testable import NightscoutKit
import LookoutWire

/// Decodes `json` as `T`.
func decode<T: Decodable>(_ type: T.Type, _ json: String, file: StaticString = #filePath, line: UInt = #line) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(json.utf8))
}

/// Encodes a value and reads it back as a `JSONValue` tree.
func jsonTree<T: Encodable>(_ value: T) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
}

/// Parses JSON text as a `JSONValue` tree.
func jsonTree(_ text: String) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
}

/// Removes `null` members from objects (recursively at the top level only).
func droppingTopLevelNulls(_ v: JSONValue) -> JSONValue {
    guard case .object(let o) = v else { return v }
    return .object(o.filter { $0.value != .null })
}

/// Milliseconds for a UTC calendar date (test helper).
func utcMillis(_ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0, _ ms: Int = 0) -> Int64 {
    var c = DateComponents()
    c.year = y; c.month = mo; c.day = d; c.hour = h; c.minute = mi; c.second = s
    var cal = Calendar(identifier: .gregorian)
    cal.timeZone = TimeZone(identifier: "UTC")!
    return Int64(cal.date(from: c)!.timeIntervalSince1970) * 1000 + Int64(ms)
}
