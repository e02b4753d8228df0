/// An error in a TOML document or in the host configuration, located by file, line, column and
/// key path.
///
/// `description` reads `"<file>:<line>:<column>: <key path>: <message>"`, leaving out the parts
/// that do not apply, for example
/// `config.toml:7:10: limits.memory: expected a size such as "64MB", got a boolean`.
///
/// Messages never contain the value of a secret.
public struct ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The display name of the file (a path or a name such as `config.toml`), if known.
    public var file: String?
    /// The 1-based line, if the error is tied to a place in the file.
    public var line: Int?
    /// The 1-based column (in Unicode scalars), if known.
    public var column: Int?
    /// The dotted key path the error is about, such as `limits.memory`, if any.
    public var keyPath: String?
    /// What is wrong, in words a user can act on.
    public var message: String

    /// Creates an error; every location part is optional.
    public init(
        file: String? = nil, line: Int? = nil, column: Int? = nil, keyPath: String? = nil,
        message: String
    ) {
        self.file = file
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.message = message
    }

    /// `"<file>:<line>:<column>: <key path>: <message>"` without the parts that are `nil`.
    public var description: String {
        var location: [String] = []
        if let file { location.append(file) }
        if let line {
            location.append(String(line))
            if let column { location.append(String(column)) }
        }
        var parts: [String] = []
        if !location.isEmpty { parts.append(location.joined(separator: ":")) }
        if let keyPath, !keyPath.isEmpty { parts.append(keyPath) }
        parts.append(message)
        return parts.joined(separator: ": ")
    }

    /// A copy of this error attributed to `file` (used when a parser error reaches the config loader).
    public func inFile(_ file: String?) -> ConfigError {
        var copy = self
        copy.file = file
        return copy
    }
}

/// Helpers for phrasing configuration messages: key paths and "did you mean" suggestions.
public enum ConfigWording {
    /// Renders key path components the way TOML writes them: bare where possible, quoted otherwise
    /// (`scripts."alerts.lua".trusted`).
    static func keyPath(_ components: [String]) -> String {
        components.map(quotedKey).joined(separator: ".")
    }

    /// One key as TOML writes it: bare if it only has `A-Za-z0-9_-`, otherwise a basic string.
    public static func quotedKey(_ key: String) -> String {
        if !key.isEmpty && key.unicodeScalars.allSatisfy(TOMLCharacters.isBareKey) { return key }
        return TOMLValue.string(key).description
    }

    /// The known name closest to `name` (case-insensitive edit distance at most 2, or at most a
    /// third of the name's length for long names; a prefix of at least 3 letters counts as
    /// distance 1), if any.
    public static func suggestion(for name: String, among known: [String]) -> String? {
        let lowered = name.lowercased()
        var best: (name: String, distance: Int)?
        for candidate in known {
            let other = candidate.lowercased()
            var distance = editDistance(lowered, other)
            // An abbreviation ("warn" for "warning") counts as close.
            if min(lowered.count, other.count) >= 3 && (other.hasPrefix(lowered) || lowered.hasPrefix(other)) {
                distance = min(distance, 1)
            }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        guard let best else { return nil }
        let allowed = max(2, name.count / 3)
        return best.distance <= allowed ? best.name : nil
    }

    /// `"; did you mean X? Known: …"` or `"; known: …"`, to append to an unknown-name message.
    static func unknownNameHint(_ name: String, known: [String], render: (String) -> String) -> String {
        let sorted = known.sorted()
        let list = sorted.map(render).joined(separator: ", ")
        if let guess = suggestion(for: name, among: sorted) {
            return "; did you mean \(render(guess))? Known: " + list
        }
        return "; known: " + list
    }

    /// Levenshtein distance between two strings, counted in characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
