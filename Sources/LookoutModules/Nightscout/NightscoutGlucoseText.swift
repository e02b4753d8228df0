import Foundation
import LookoutConfig
import LookoutWire
import Lua
import NightscoutKit

/// Glucose as people read it, for scripts: `nightscout.arrow(direction)`,
/// `nightscout.format_bg(value, opts)` and `client:units()`. The formatting is LookoutWire's
/// `GlucoseText`, the one the demo uses too.
enum NightscoutGlucoseText {
    /// The options `format_bg` accepts.
    static let formatOptions = ["units", "other", "direction"]

    /// The unit `format_bg` shows when not told, for one Lua state (touched on its thread only):
    /// the `units` the config's Nightscout profiles agree on, else the first a client learned
    /// from its site (`client:units()`), else mg/dL.
    final class DefaultUnit {
        var unit: GlucoseText.Unit?
        init(config: HostConfig) {
            let configured = Set(config.profiles(service: "nightscout").compactMap {
                (try? config.profile(service: "nightscout", name: $0)?.string("units")).flatMap { $0 }.flatMap { GlucoseText.Unit(text: $0) }
            })
            unit = configured.count == 1 ? configured.first : nil
        }
    }

    /// The library functions.
    static func library(_ fallback: DefaultUnit) -> [String: LuaBinding] {
        [
            "arrow": { call in
                call.returning(.text(GlucoseTrend.arrow(try call.optionalString(1))))
            },
            "format_bg": { call in try formatBG(call, fallback: fallback) },
        ]
    }

    /// The client methods.
    static func methods(_ fallback: DefaultUnit) -> [String: LuaBinding] {
        ["units": { call in try units(call, fallback: fallback) }]
    }

    /// `units = "mmol"` or `"mg/dL"` (any spelling `GlucoseText.Unit` reads), as Lua sees it.
    static func unit(_ value: LuaValue?, call: LuaCall, argument n: Int, what: String) throws(LuaRaise) -> GlucoseText.Unit? {
        guard let value else { return nil }
        guard let text = value.text, let unit = GlucoseText.Unit(text: text) else {
            throw call.argumentError(n, "\(what): expected \"mg/dL\" or \"mmol\"")
        }
        return unit
    }

    /// `nightscout.format_bg(value, opts)`: `value` in mg/dL (or an entry with `sgv` and `direction`).
    static func formatBG(_ call: LuaCall, fallback: DefaultUnit) throws -> LuaReturn {
        let mgdl: Double
        var direction: String?
        if case .object(let entry) = try call.value(1, name: "value") {
            guard let sgv = entry["sgv"]?.double else { throw call.argumentError(1, "an entry with a numeric 'sgv' expected") }
            mgdl = sgv
            direction = entry["direction"]?.text
        } else {
            mgdl = try call.number(1)
        }
        guard mgdl.isFinite, mgdl >= 0, mgdl <= 10_000 else {
            throw call.argumentError(1, "expected a glucose value in mg/dL (0 to 10000), got \(mgdl)")
        }
        let opts = try call.options(2)
        if let unknown = opts.keys.sorted().first(where: { !formatOptions.contains($0) }) {
            throw call.argumentError(2, "unknown option '\(unknown)' (known: \(formatOptions.joined(separator: ", ")))")
        }
        let unit = try unit(opts["units"], call: call, argument: 2, what: "opts.units") ?? fallback.unit ?? .mgdl
        var other = true
        if let value = opts["other"] {
            guard case .bool(let b) = value else { throw call.argumentError(2, "opts.other: expected a boolean") }
            other = b
        }
        if let value = opts["direction"] {
            guard let text = value.text else { throw call.argumentError(2, "opts.direction: expected a direction name such as \"Flat\"") }
            direction = text
        }
        return call.returning(.text(GlucoseText.format(mgdl: mgdl, unit: unit, other: other, direction: direction)))
    }

    /// `client:units()`: the unit people of this site read, "mg/dL" or "mmol": the profile's
    /// `units` setting, else the site's own (its status settings), else "mg/dL"; `nil, err` when
    /// the site cannot be asked.
    static func units(_ call: LuaCall, fallback: DefaultUnit) throws -> LuaReturn {
        let site = try NightscoutSite.site(call)
        if let unit = site.units { return call.returning(.text(luaName(unit))) }
        let client = site.client
        return try NightscoutSite.wait(call, "nightscout units", {
            let body = try await client.v1JSON("GET", "/status.json")
            let status = try? JSONParser.parse(body)
            let text = status?["settings"]?["units"]?.stringValue ?? status?["units"]?.stringValue
            return text.flatMap { GlucoseText.Unit(text: $0) } ?? .mgdl
        }) { stack, unit in
            site.units = unit
            if fallback.unit == nil { fallback.unit = unit }
            stack.push(luaName(unit))
            return 1
        }
    }

    /// How Lua names a unit: "mg/dL" or "mmol" (what config takes).
    static func luaName(_ unit: GlucoseText.Unit) -> String { unit == .mgdl ? "mg/dL" : "mmol" }
}
