// Where keys and table headers put things, and which redefinitions TOML refuses.

extension TOMLParserState {
    /// Stores `value` under a (possibly dotted) key, creating intermediate tables.
    func insert(
        _ value: TOMLValue, at key: [TOMLKeyPart], into table: TOMLTableBuilder,
        valueLine: Int, valueColumn: Int
    ) throws(ConfigError) {
        var current = table
        for (position, part) in key.dropLast().enumerated() {
            let path = ConfigWording.keyPath(key[...position].map(\.name))
            if let slot = current[part.name] {
                guard case .table(let inner) = slot.content,
                    inner.origin == .dotted || inner.origin == .implicit
                else {
                    throw error(
                        "cannot add keys to \(path) with a dotted key: it is already defined as "
                            + "\(slot.kindDescription) on line \(slot.line)",
                        line: part.line, column: part.column)
                }
                inner.origin = .dotted
                current = inner
            } else {
                let inner = TOMLTableBuilder(origin: .dotted)
                current[part.name] = .init(
                    content: .table(inner), line: part.line, column: part.column,
                    valueLine: valueLine, valueColumn: valueColumn)
                current = inner
            }
        }
        let last = key[key.count - 1]
        if let existing = current[last.name] {
            throw error(
                "duplicate key \(ConfigWording.keyPath(key.map(\.name))) (first defined on line \(existing.line))",
                line: last.line, column: last.column)
        }
        current[last.name] = .init(
            content: .value(value), line: last.line, column: last.column,
            valueLine: valueLine, valueColumn: valueColumn)
    }

    // MARK: Table headers

    /// `[a.b]` or `[[a.b]]`; returns the table that following keys go into.
    mutating func parseHeader(root: TOMLTableBuilder) throws(ConfigError) -> TOMLTableBuilder {
        let headerLine = line
        let headerColumn = column
        advance()
        let isArray = peek() == "["
        if isArray { advance() }
        let key = try parseKey()
        skipWhitespace()
        let closing = isArray ? "]]" : "]"
        guard looksAt(closing) else {
            throw error("expected '\(closing)' to close the table header, found \(TOMLCharacters.describe(peek()))")
        }
        advance(closing.unicodeScalars.count)

        var current = root
        for (position, part) in key.dropLast().enumerated() {
            if let slot = current[part.name] {
                switch slot.content {
                case .table(let inner):
                    current = inner
                case .arrayOfTables(let elements):
                    current = elements[elements.count - 1]
                case .value:
                    let path = ConfigWording.keyPath(key[...position].map(\.name))
                    throw error(
                        "cannot define a table inside \(path): it is already \(slot.kindDescription) "
                            + "(line \(slot.line))",
                        line: part.line, column: part.column)
                }
            } else {
                let inner = TOMLTableBuilder(origin: .implicit)
                current[part.name] = .init(
                    content: .table(inner), line: part.line, column: part.column,
                    valueLine: headerLine, valueColumn: headerColumn)
                current = inner
            }
        }

        let last = key[key.count - 1]
        let path = ConfigWording.keyPath(key.map(\.name))
        let fresh = TOMLTableBuilder(origin: .header)
        func slot(_ content: TOMLTableBuilder.Content) -> TOMLTableBuilder.Slot {
            .init(
                content: content, line: last.line, column: last.column, valueLine: headerLine, valueColumn: headerColumn
            )
        }
        guard let existing = current[last.name] else {
            current[last.name] = slot(isArray ? .arrayOfTables([fresh]) : .table(fresh))
            return fresh
        }
        let here = (line: last.line, column: last.column)
        switch (existing.content, isArray) {
        case (.arrayOfTables(let elements), true):
            current[last.name] = .init(
                content: .arrayOfTables(elements + [fresh]), line: existing.line, column: existing.column,
                valueLine: existing.valueLine, valueColumn: existing.valueColumn)
            return fresh
        case (.table(let table), false) where table.origin == .implicit:
            table.origin = .header
            current[last.name] = slot(.table(table))
            return table
        case (.table(let table), false):
            let how = table.origin == .dotted ? "by dotted keys" : "by a header"
            throw error(
                "table [\(path)] is already defined \(how) on line \(existing.line)",
                line: here.line, column: here.column)
        case (.arrayOfTables, false):
            throw error(
                "[\(path)] is an array of tables (line \(existing.line)); write [[\(path)]] to add an element",
                line: here.line, column: here.column)
        case (.table, true):
            throw error(
                "cannot define [[\(path)]]: \(path) is already a table (line \(existing.line))",
                line: here.line, column: here.column)
        case (.value, _):
            let header = isArray ? "[[\(path)]]" : "[\(path)]"
            throw error(
                "cannot define \(header): \(path) is already \(existing.kindDescription) (line \(existing.line))",
                line: here.line, column: here.column)
        }
    }
}
