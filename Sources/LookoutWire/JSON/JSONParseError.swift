/// A JSON syntax error found by ``JSONParser``, with the byte offset where it was found.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset into the input.
    public var offset: Int
    /// What was wrong.
    public var message: String
    /// Creates an error.
    public init(offset: Int, message: String) { self.offset = offset; self.message = message }
    /// `JSON parse error at byte N: message`.
    public var description: String { "JSON parse error at byte \(offset): \(message)" }
}
