import Foundation
import LookoutWire

/// The `displayUnits` signalk-server adds to the metadata it serves (`rest.js`
/// `enhanceMetadataResponse`, `ws.ts` `handleValuesMeta`, `src/unitpreferences/resolver.ts`), with
/// its default unit preferences: the preset `nautical-metric` (knots, degrees, °C, metres, volts …)
/// and the default categories of the schema's paths (tables in `SignalKUnitPreferences.swift`).
///
/// A path's category is the one stored in its meta (`displayUnits.category`, from a meta PUT), else
/// its default (by path, by wildcard, then by its SI `units`); the resolved form carries the
/// Math.js `formula`/`inverseFormula` from SI and the `symbol`:
/// `{"category":"speed","targetUnit":"kn","formula":"value * 1.94384","inverseFormula":"value * 0.514444","symbol":"kn","displayFormat":"0.0"}`.
/// Not modelled: per-user presets and primary categories, custom presets, categories and unit
/// definitions, the unit-preferences API.
enum SignalKDisplayUnits {
    /// One conversion from an SI unit.
    struct Conversion: Sendable {
        let formula: String
        let inverseFormula: String
        let symbol: String
    }

    private static let exactCategories: [String: String] = {
        var out: [String: String] = [:]
        for (path, category) in defaultCategories { out[path] = category }
        return out
    }()

    /// The wildcard paths, in order, as segment lists (`*` matches one segment).
    private static let wildcardCategories: [(segments: [Substring], category: String)] =
        defaultCategories.filter { $0.path.contains("*") }.map { ($0.path.split(separator: ".", omittingEmptySubsequences: false), $0.category) }

    /// The category a path gets without a stored one (`getDefaultCategory`).
    static func defaultCategory(path: String, units: String?) -> String? {
        if let c = exactCategories[path] { return c }
        let parts = path.split(separator: ".", omittingEmptySubsequences: false)
        for (segments, category) in wildcardCategories where segments.count == parts.count {
            if zip(segments, parts).allSatisfy({ $0 == "*" ? !$1.isEmpty : $0 == $1 }) { return category }
        }
        guard let units else { return nil }
        return category(forBaseUnit: units)
    }

    /// `getCategoryForBaseUnit` (no user preferences): the only category of the unit, its primary
    /// one, else the first by name.
    static func category(forBaseUnit unit: String) -> String? {
        let matching = categoryToBaseUnit.filter { $0.baseUnit == unit }.map(\.category)
        if matching.count <= 1 { return matching.first }
        if let primary = primaryCategories[unit], matching.contains(primary) { return primary }
        return matching.sorted().first
    }

    /// `resolveDisplayUnits`: the stored form (`{category, targetUnit?, displayFormat?, …}`) with
    /// the conversion from `units`, or nil when it cannot be resolved.
    static func resolve(_ stored: [String: JSONValue], units: String?) -> JSONValue? {
        guard let category = stored["category"]?.stringValue, !category.isEmpty else { return nil }
        let storedTarget = stored["targetUnit"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let storedFormat = stored["displayFormat"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        func make(_ target: String, _ formula: String, _ inverse: String, _ symbol: String, _ format: String?) -> JSONValue {
            var o: [String: JSONValue] = [
                "category": .string(category), "targetUnit": .string(target), "formula": .string(formula),
                "inverseFormula": .string(inverse), "symbol": .string(symbol),
            ]
            if let format { o["displayFormat"] = .string(format) }
            return .object(o)
        }
        switch category {
        case "base":
            return make(units ?? "base", "value", "value", units ?? "", nil)
        case "custom":
            guard let target = storedTarget else { return nil }
            let symbol = stored["symbol"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            if let units, target == units { return make(target, "value", "value", symbol ?? target, storedFormat) }
            if let formula = stored["formula"]?.stringValue, !formula.isEmpty {
                return make(target, formula, stored["inverseFormula"]?.stringValue ?? "", symbol ?? target, storedFormat)
            }
            guard let units, let c = definitions[units]?[target] else { return nil }
            return make(target, c.formula, c.inverseFormula, c.symbol.isEmpty ? target : c.symbol, storedFormat)
        default:
            guard let base = categoryToBaseUnit.first(where: { $0.category == category })?.baseUnit else { return nil }
            let preset = self.preset[category]
            guard let target = storedTarget ?? preset?.targetUnit else { return nil }
            let format = storedFormat ?? preset?.displayFormat
            if target == base { return make(target, "value", "value", base, format) }
            guard let c = definitions[base]?[target] else { return nil }
            return make(target, c.formula, c.inverseFormula, c.symbol, format)
        }
    }

    /// `enhanceMetadataResponse`: `meta` with `displayUnits` resolved for the vessel-relative
    /// dotted `path` (unchanged when nothing resolves).
    static func enhance(_ meta: JSONValue, path: String) -> JSONValue {
        guard var m = meta.objectValue else { return meta }
        let units = m["units"]?.stringValue
        var stored = m["displayUnits"]?.objectValue
        if stored?["category"]?.stringValue?.isEmpty ?? true, !path.isEmpty,
            let category = defaultCategory(path: path, units: units)
        {
            stored = ["category": .string(category)]
        }
        if let stored, let resolved = resolve(stored, units: units) { m["displayUnits"] = resolved }
        return .object(m)
    }

    /// The keys `enhanceTreeMetadata` does not descend into.
    private static let leafKeys: Set<String> = ["value", "meta", "$source", "timestamp", "pgn", "sentence", "values"]

    /// `enhanceTreeMetadata`: every `meta` in a subtree of the REST API enhanced; `path` is the
    /// subtree's vessel-relative path segments (empty for a vessel or the root).
    static func enhanceTree(_ node: JSONValue, path: [String]) -> JSONValue {
        guard var o = node.objectValue else { return node }
        if let meta = o["meta"], meta.objectValue != nil { o["meta"] = enhance(meta, path: path.joined(separator: ".")) }
        for (k, v) in o where !leafKeys.contains(k) && v.objectValue != nil {
            o[k] = enhanceTree(v, path: path + [k])
        }
        return .object(o)
    }
}

extension SignalKDisplayUnits {
    /// A resolved displayUnits' `formula` applied to an SI value, for the forms the default
    /// preferences use (`value`, `value * k`, `value / k`, `value + k`, `value - k`); nil for
    /// any other formula.
    static func apply(formula: String, to value: Double) -> Double? {
        let words = formula.split(separator: " ")
        guard words.first == "value" else { return nil }
        if words.count == 1 { return value }
        guard words.count == 3, let k = Double(words[2]) else { return nil }
        switch words[1] {
        case "*": return value * k
        case "/": return value / k
        case "+": return value + k
        case "-": return value - k
        default: return nil
        }
    }

    /// A value as people read it by resolved `displayUnits`: converted, with the decimals of its
    /// `displayFormat` (`0.0` → one) and the symbol (`6.2 kn`, `93.0°`, `17.1 °C`); nil when
    /// the formula is not one ``apply(formula:to:)`` knows.
    static func text(_ value: Double, displayUnits d: JSONValue) -> String? {
        guard let formula = d["formula"]?.stringValue, let shown = apply(formula: formula, to: value), shown.isFinite else { return nil }
        let format = d["displayFormat"]?.stringValue ?? "0.0"
        let decimals = format.split(separator: ".").dropFirst().first.map { $0.count } ?? 0
        let number = String(format: "%.\(min(decimals, 6))f", shown)
        let symbol = d["symbol"]?.stringValue ?? ""
        if symbol.isEmpty { return number }
        return symbol == "°" ? number + symbol : number + " " + symbol
    }
}

extension SignalKSimulator {
    /// The own vessel's value at a dotted `path` as people read it, by the display units the
    /// simulator serves for it (`"6.2 kn"`, `"93.0°"`, `"17.1 °C"`); nil when the path holds no
    /// number yet or has no display units.
    public func displayText(_ path: String) async -> String? {
        let store = await hub.store
        let keys = ["vessels", selfID] + path.split(separator: ".").map(String.init)
        guard let leaf = SignalKStore.get(store.model, keys),
            let value = leaf["value"]?.doubleValue,
            let meta = leaf["meta"] ?? store.metadata(context: selfContext, path: path),
            let units = SignalKDisplayUnits.enhance(meta, path: path)["displayUnits"]
        else { return nil }
        return SignalKDisplayUnits.text(value, displayUnits: units)
    }
}
