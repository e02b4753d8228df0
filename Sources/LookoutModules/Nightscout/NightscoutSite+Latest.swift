import Foundation
import Lua
import NightscoutKit
import LookoutWire

/// `home:latest()`: the newest glucose reading, ready for an alert.
extension NightscoutSite {
    /// Readings further apart than this give no delta.
    static let deltaWindow: TimeInterval = 15 * 60

    /// The newest `sgv` reading with its direction, delta and age, or `nil, err` (`no_data`) when
    /// the site has none.
    static func latest(_ call: LuaCall) throws -> LuaReturn {
        let client = try site(call).client
        let engine = call.engine
        return try wait(call, "nightscout latest", {
            let readings: [Entry]
            switch try await client.resolvedAPI() {
            case .v3:
                readings = try await client.search(Entry.self, V3Search(
                    collection: .entries, limit: 2, filters: [V3Search.Filter("type", .eq, EntryType.sgv.rawValue)]))
            case .v1:
                readings = try await client.entries(.entries(type: .sgv, from: Date(timeIntervalSince1970: 0), count: 2))
            }
            return readings
        }) { stack, readings in
            // A reading without a finite value or a time a server can hold is skipped, as the
            // list readers drop it, with the same warning.
            let unusable = readings.filter { $0.sgv == nil || $0.common.eventTime == nil }.count
            NightscoutDocuments.warnDropped(unusable, of: readings.count, collection: .entries,
                                            reason: "no finite sgv or no usable date", engine: engine)
            if let value = latestValue(readings, now: engine.clock.now()) {
                stack.push(value)
                return 1
            }
            stack.pushNil()
            engine.push(error: LuaErrorInfo(code: "no_data", message: "the site has no glucose readings", service: "nightscout"),
                             on: stack)
            return 2
        }
    }

    /// The script's view of the newest reading of `readings` (newest first):
    /// `sgv` (mg/dL), `mmol`, `direction`, `date` (epoch ms), `dateString`, `age` (seconds since
    /// the reading), `delta` (mg/dL per 5 minutes against the previous reading, when it is at
    /// most 15 minutes older), `device` and `entry` (the whole document).
    static func latestValue(_ readings: [Entry], now: Date) -> LuaValue? {
        let usable = readings.filter { $0.sgv != nil && $0.common.eventTime != nil }
        guard let newest = usable.first, let sgv = newest.sgv, let time = newest.common.eventTime else { return nil }
        var fields: [String: LuaValue] = [
            "sgv": sgv == sgv.rounded() && abs(sgv) < 9e15 ? .int(Int64(sgv)) : .double(sgv),
            "mmol": .double((GlucoseUnit.mmol(fromMgdl: sgv) * 10).rounded() / 10),
            "date": .int(time.epochMilliseconds),
            "dateString": .text(time.isoString),
            "age": .double(((now.timeIntervalSince(time.date)) * 10).rounded() / 10),
        ]
        if let direction = newest.direction { fields["direction"] = .text(direction.rawValue) }
        if let device = newest.common.device { fields["device"] = .text(device) }
        if usable.count > 1, let previousSGV = usable[1].sgv, let previous = usable[1].common.eventTime {
            let gap = time.date.timeIntervalSince(previous.date)
            if gap > 0, gap <= deltaWindow {
                fields["delta"] = .double(((sgv - previousSGV) * 300 / gap * 10).rounded() / 10)
            }
        }
        if let data = try? JSONEncoder().encode(newest), let json = try? JSONDecoder().decode(JSONValue.self, from: data) {
            fields["entry"] = luaValue(json)
        }
        return .object(fields)
    }

    /// A NightscoutKit JSON value as a Lua value.
    static func luaValue(_ json: JSONValue) -> LuaValue {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .text(s)
        case .array(let a): return .array(a.map(luaValue))
        case .object(let o): return .object(o.mapValues(luaValue))
        }
    }
}
