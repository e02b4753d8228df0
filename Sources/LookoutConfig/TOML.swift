/// One TOML value.
///
/// Date and time values are kept as their normalized text (`T` between date and time, `Z` for
/// UTC, the fraction as written): the host never does date arithmetic on configuration.
public enum TOMLValue: Sendable, Equatable {
    /// A string (basic, literal or multi-line in the source).
    case string(String)
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A binary64 float, including `inf` and `nan`.
    case float(Double)
    /// `true` or `false`.
    case boolean(Bool)
    /// An offset date-time, local date-time, local date or local time, as normalized text such as
    /// `1979-05-27T07:32:00Z`, `1979-05-27T07:32:00`, `1979-05-27` or `07:32:00.5`.
    case datetime(String)
    /// An array (static array or array of tables).
    case array([TOMLValue])
    /// A table (standard, inline or one element of an array of tables).
    case table(TOMLTable)

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integer.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, if this is a float or an integer.
    public var doubleValue: Double? {
        switch self {
        case .float(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    /// The boolean, if this is a boolean.
    public var boolValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    /// The normalized date/time text, if this is a date or time.
    public var datetimeValue: String? {
        if case .datetime(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [TOMLValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The table, if this is a table.
    public var tableValue: TOMLTable? {
        if case .table(let value) = self { return value }
        return nil
    }

    /// Whether this is a string, number, boolean or date/time (not an array or table).
    public var isScalar: Bool {
        switch self {
        case .array, .table: return false
        default: return true
        }
    }

    /// The kind of value with an article, for messages: "a string", "an integer", "a float",
    /// "a boolean", "a date-time", "an array", "a table".
    public var kindDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .float: return "a float"
        case .boolean: return "a boolean"
        case .datetime: return "a date-time"
        case .array: return "an array"
        case .table: return "a table"
        }
    }
}

extension TOMLValue: CustomStringConvertible {
    /// The value written as TOML inline syntax (`"text"`, `42`, `[1, 2]`, `{ a = 1 }`).
    public var description: String {
        switch self {
        case .string(let value):
            var out = "\""
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                case "\r": out += "\\r"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                default:
                    if scalar.value < 0x20 || scalar.value == 0x7F {
                        out += "\\u" + TOMLCharacters.hex4(scalar.value)
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            return out + "\""
        case .integer(let value): return String(value)
        case .float(let value):
            if value.isNaN { return "nan" }
            if value.isInfinite { return value < 0 ? "-inf" : "inf" }
            return "\(value)"
        case .boolean(let value): return value ? "true" : "false"
        case .datetime(let value): return value
        case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .table(let table):
            if table.isEmpty { return "{}" }
            let items = table.entries.map { "\(ConfigWording.quotedKey($0.key)) = \($0.value)" }
            return "{ " + items.joined(separator: ", ") + " }"
        }
    }
}

/// A TOML table: keys in the order they were first defined, each remembering where it was
/// defined in the source.
///
/// Two tables are equal when they hold the same keys with equal values; order and source
/// positions do not take part in equality.
public struct TOMLTable: Sendable, Equatable {
    /// One key of a table with its value and source position.
    public struct Entry: Sendable, Equatable {
        /// The key (one component, unquoted).
        public var key: String
        /// The value.
        public var value: TOMLValue
        /// The 1-based line of the key: for a `[table]` or `[[array]]` header, the header's line;
        /// for an implicitly created parent table, where it was first mentioned. 0 if built in code.
        public var line: Int
        /// The 1-based column of the key (0 if built in code).
        public var column: Int
        /// The 1-based line where the value starts (the header's line for tables).
        public var valueLine: Int
        /// The 1-based column where the value starts (0 if built in code).
        public var valueColumn: Int

        /// Creates an entry; positions default to 0 (not from a file).
        public init(
            key: String, value: TOMLValue, line: Int = 0, column: Int = 0,
            valueLine: Int? = nil, valueColumn: Int? = nil
        ) {
            self.key = key
            self.value = value
            self.line = line
            self.column = column
            self.valueLine = valueLine ?? line
            self.valueColumn = valueColumn ?? column
        }
    }

    private var order: [String] = []
    private var storage: [String: Entry] = [:]

    /// An empty table.
    public init() {}

    /// A table holding `entries` in order; a later entry with the same key replaces an earlier one.
    public init(_ entries: [Entry]) {
        for entry in entries { set(entry) }
    }

    /// The keys in definition order.
    public var keys: [String] { order }

    /// The entries in definition order.
    public var entries: [Entry] { order.compactMap { storage[$0] } }

    /// The number of keys.
    public var count: Int { order.count }

    /// Whether the table has no keys.
    public var isEmpty: Bool { order.isEmpty }

    /// The value for `key`; setting `nil` removes it, setting a value keeps an existing position.
    public subscript(key: String) -> TOMLValue? {
        get { storage[key]?.value }
        set {
            if let newValue {
                var entry = storage[key] ?? Entry(key: key, value: newValue)
                entry.value = newValue
                set(entry)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The entry (value and position) for `key`.
    public func entry(_ key: String) -> Entry? { storage[key] }

    /// The line where `key` was defined, if present.
    public func line(of key: String) -> Int? { storage[key]?.line }

    /// Adds or replaces an entry (a replaced key keeps its place in the order).
    public mutating func set(_ entry: Entry) {
        if storage.updateValue(entry, forKey: entry.key) == nil { order.append(entry.key) }
    }

    /// Removes `key` and returns its value, if it was present.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> TOMLValue? {
        guard let removed = storage.removeValue(forKey: key) else { return nil }
        order.removeAll { $0 == key }
        return removed.value
    }

    /// The entry at a path of keys through nested tables (`["nightscout", "home", "url"]`).
    /// An empty path has no entry.
    public func entry(atPath path: [String]) -> Entry? {
        guard let first = path.first, let entry = storage[first] else { return nil }
        if path.count == 1 { return entry }
        guard case .table(let inner) = entry.value else { return nil }
        return inner.entry(atPath: Array(path.dropFirst()))
    }

    /// The value at a path of keys through nested tables; an empty path gives the table itself.
    public func value(atPath path: [String]) -> TOMLValue? {
        if path.isEmpty { return .table(self) }
        return entry(atPath: path)?.value
    }

    /// Equal when both tables hold the same keys with equal values (order and positions ignored).
    public static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
        guard lhs.storage.count == rhs.storage.count else { return false }
        for (key, entry) in lhs.storage {
            guard let other = rhs.storage[key], other.value == entry.value else { return false }
        }
        return true
    }
}
