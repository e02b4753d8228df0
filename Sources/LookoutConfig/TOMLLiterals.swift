// Literal syntax for building TOML values in code and tests:
// `let value: TOMLValue = ["url": "https://ns.example.org", "ports": [80, 443]]`.

extension TOMLValue: ExpressibleByStringLiteral {
    /// A `.string` value.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension TOMLValue: ExpressibleByIntegerLiteral {
    /// An `.integer` value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension TOMLValue: ExpressibleByFloatLiteral {
    /// A `.float` value.
    public init(floatLiteral value: Double) { self = .float(value) }
}

extension TOMLValue: ExpressibleByBooleanLiteral {
    /// A `.boolean` value.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}

extension TOMLValue: ExpressibleByArrayLiteral {
    /// An `.array` value.
    public init(arrayLiteral elements: TOMLValue...) { self = .array(elements) }
}

extension TOMLValue: ExpressibleByDictionaryLiteral {
    /// A `.table` value with keys in literal order and no source positions.
    public init(dictionaryLiteral elements: (String, TOMLValue)...) {
        self = .table(TOMLTable(elements.map { TOMLTable.Entry(key: $0.0, value: $0.1) }))
    }
}

extension TOMLTable: ExpressibleByDictionaryLiteral {
    /// A table with keys in literal order and no source positions.
    public init(dictionaryLiteral elements: (String, TOMLValue)...) {
        self.init(elements.map { TOMLTable.Entry(key: $0.0, value: $0.1) })
    }
}
