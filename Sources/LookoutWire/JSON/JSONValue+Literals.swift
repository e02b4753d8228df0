extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` literal → ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// Boolean literal → ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Integer literal → ``int(_:)``.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// Float literal → ``double(_:)``.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// String literal → ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Array literal → ``array(_:)``.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Dictionary literal → ``object(_:)`` (a later duplicate key wins).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, b in b }))
    }
}
