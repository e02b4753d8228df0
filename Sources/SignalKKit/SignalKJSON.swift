import Foundation
import LookoutWire

/// Signal K's reading of JSON: LookoutWire's strict ``JSONParser`` with numbers kept as written
/// (`45500` is `.int`, `45500.0` is `.double`), errors as
/// ``SignalKDecodingError/invalidJSON(offset:reason:)``.
public enum SignalKJSON {
    /// The parser options Signal K uses (numbers as written).
    public static let options = JSONParser.Options(numbers: .asWritten)

    /// Parses JSON from raw bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        do { return try JSONParser.parse(bytes, options: options) } catch let e as JSONParseError {
            throw SignalKDecodingError(e)
        }
    }

    /// Parses JSON from a byte array.
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBytes { try parse($0) }
    }

    /// Parses JSON from `Data`.
    public static func parse(_ data: Data) throws -> JSONValue {
        try data.withUnsafeBytes { try parse($0) }
    }

    /// Parses JSON from a string (its UTF-8 bytes).
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parse(UnsafeRawBufferPointer($0)) }
    }
}

extension SignalKDecodingError {
    /// The Signal K form of a wire parse error.
    init(_ error: JSONParseError) { self = .invalidJSON(offset: error.offset, reason: error.message) }
}
