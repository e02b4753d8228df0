// The mutable tree the parser fills in, with the bookkeeping TOML needs to refuse redefinitions.
// It never leaves the parser: `freeze()` turns it into the immutable `TOMLTable`.

/// A key component with the position where it was written.
struct TOMLKeyPart {
    /// The key text (unquoted).
    var name: String
    /// 1-based line of the component.
    public var line: Int
    /// 1-based column of the component.
    var column: Int
}

/// A table under construction. A reference type so that the parser can keep a handle on the
/// "current table" while it grows; confined to one parse call.
final class TOMLTableBuilder {
    /// How the table came to exist; decides which later definitions are allowed.
    enum Origin {
        /// The document root.
        case root
        /// Created as a parent of a `[a.b]` header (may still be defined by its own header later).
        case implicit
        /// Defined by a `[header]`, or an element of an `[[array of tables]]`.
        case header
        /// Created by a dotted key (`a.b = 1` creates `a`).
        case dotted
        /// An inline table `{ … }` being parsed (frozen into a value when it closes).
        case inline
    }

    /// What a key holds while parsing.
    enum Content {
        /// A finished value (scalar, static array, inline table).
        case value(TOMLValue)
        /// A table that may still grow.
        case table(TOMLTableBuilder)
        /// An array of tables, whose last element may still grow.
        case arrayOfTables([TOMLTableBuilder])
    }

    /// One key of the table under construction.
    struct Slot {
        var content: Content
        var line: Int
        var column: Int
        var valueLine: Int
        var valueColumn: Int
    }

    var origin: Origin
    private(set) var order: [String] = []
    private(set) var slots: [String: Slot] = [:]

    init(origin: Origin) {
        self.origin = origin
    }

    subscript(key: String) -> Slot? {
        get { slots[key] }
        set {
            if slots.updateValue(newValue!, forKey: key) == nil { order.append(key) }
        }
    }

    /// The finished, immutable table.
    func freeze() -> TOMLTable {
        var table = TOMLTable()
        for key in order {
            guard let slot = slots[key] else { continue }
            let value: TOMLValue
            switch slot.content {
            case .value(let v): value = v
            case .table(let builder): value = .table(builder.freeze())
            case .arrayOfTables(let builders): value = .array(builders.map { .table($0.freeze()) })
            }
            table.set(
                TOMLTable.Entry(
                    key: key, value: value, line: slot.line, column: slot.column,
                    valueLine: slot.valueLine, valueColumn: slot.valueColumn))
        }
        return table
    }
}

extension TOMLTableBuilder.Slot {
    /// "a string", "a table", "an array of tables"… for messages about an existing definition.
    var kindDescription: String {
        switch content {
        case .value(let value):
            if case .table = value { return "an inline table" }
            return value.kindDescription
        case .table: return "a table"
        case .arrayOfTables: return "an array of tables"
        }
    }
}
