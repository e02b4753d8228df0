/// An error from decoding Signal K input. Every case names what is wrong and where, so it can be
/// shown to a user as is. Decoding never traps on bad input; it throws one of these.
public enum SignalKDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not valid JSON. `offset` is the byte offset of the problem.
    case invalidJSON(offset: Int, reason: String)
    /// A field has the wrong JSON type. `field` is a path such as `updates[0].values[1].path`.
    case wrongType(field: String, expected: String, found: String)
    /// A required field is absent. `field` is a path such as `updates[0].values[1].value`.
    case missingField(field: String)
    /// A timestamp is not RFC 3339 (`2014-08-15T16:00:00.081Z`, fraction optional).
    case invalidTimestamp(field: String, value: String)
    /// The input is valid JSON but not the kind of document the caller asked for.
    case unexpectedMessage(expected: String, reason: String)

    /// A human-readable explanation naming the problem and its location.
    public var description: String {
        switch self {
        case .invalidJSON(let offset, let reason):
            return "invalid JSON at byte \(offset): \(reason)"
        case .wrongType(let field, let expected, let found):
            return "\(field): expected \(expected), found \(found)"
        case .missingField(let field):
            return "\(field): required field is missing"
        case .invalidTimestamp(let field, let value):
            return "\(field): invalid RFC 3339 timestamp \"\(value)\""
        case .unexpectedMessage(let expected, let reason):
            return "not a \(expected): \(reason)"
        }
    }
}
