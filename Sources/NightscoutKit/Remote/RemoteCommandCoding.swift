import Foundation
import LookoutWire

extension RemoteCommand {
    /// The exact §5.3 JSON body: `version`, `createdDate`, `sendNotification`, `otp`, `status`,
    /// `action` in that order (then `_id` when set), no whitespace; numbers as Swift's
    /// `JSONEncoder` writes them (`1.5`, `20`, `3600`); dates as
    /// `yyyy-MM-dd'T'HH:mm:ss.SSSZ` with an RFC-822 offset (`RemoteCommand.wireDate`).
    /// - Parameter utcOffsetMinutes: the offset the dates are written in (default UTC, `+0000`).
    public func encoded(utcOffsetMinutes: Int = 0, includingID: Bool = false) -> Data {
        let j = LoopCommand.jsonString
        var members = [
            "\"version\":" + j(version),
            "\"createdDate\":" + j(Self.wireDate(createdDate, utcOffsetMinutes: utcOffsetMinutes)),
            "\"sendNotification\":" + (sendNotification ? "true" : "false"),
            "\"otp\":" + j(otp),
            "\"status\":{\"state\":" + j(status.state.rawValue) + ",\"message\":" + j(status.message) + "}",
            "\"action\":{" + j(action.key) + ":" + action.encodedFields(utcOffsetMinutes: utcOffsetMinutes) + "}",
        ]
        if includingID, let id { members.append("\"_id\":" + j(id)) }
        return Data(("{" + members.joined(separator: ",") + "}").utf8)
    }

    /// `date` as `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (e.g. `2023-03-19T12:00:00.000-0500`), in the given
    /// offset from UTC.
    public static func wireDate(_ date: Date, utcOffsetMinutes: Int = 0) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let local = NightscoutDate.isoString(epochMilliseconds: ms + Int64(utcOffsetMinutes) * 60_000)
        let sign = utcOffsetMinutes < 0 ? "-" : "+"
        let h = abs(utcOffsetMinutes) / 60, m = abs(utcOffsetMinutes) % 60
        return String(local.dropLast()) + sign + (h < 10 ? "0" : "") + String(h) + (m < 10 ? "0" : "") + String(m)
    }

    /// A number as `JSONEncoder` writes a `Double`: integral values without a fraction.
    static func wireNumber(_ d: Double) -> String {
        d.isFinite && d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(describing: d)
    }

    /// Decodes a stored command (with `_id`) from one element of `GET /api/v2/remotecommands`.
    /// - Throws: `NightscoutError.decoding` naming the missing or malformed field.
    public init(json: JSONValue) throws {
        func fail(_ m: String) -> NightscoutError { .decoding("remote command: \(m)") }
        guard case .object(let o) = json else { throw fail("expected an object") }
        func string(_ key: String, in o: [String: JSONValue]) throws -> String {
            guard let s = o[key]?.stringValue else { throw fail("'\(key)' must be a string") }
            return s
        }
        func date(_ key: String, in o: [String: JSONValue]) throws -> Date {
            guard let (ms, _) = NightscoutDate.parseISO(try string(key, in: o)) else { throw fail("'\(key)' is not a date") }
            return Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        func number(_ key: String, in o: [String: JSONValue]) throws -> Double {
            switch o[key] {
            case .int(let i)?: return Double(i)
            case .double(let d)? where d.isFinite: return d
            default: throw fail("'\(key)' must be a number")
            }
        }
        func optional<T>(_ key: String, in o: [String: JSONValue], _ read: (String, [String: JSONValue]) throws -> T) throws -> T? {
            guard let v = o[key], v != .null else { return nil }
            return try read(key, o)
        }
        func bool(_ key: String, in o: [String: JSONValue]) throws -> Bool {
            guard case .bool(let b)? = o[key] else { throw fail("'\(key)' must be true or false") }
            return b
        }
        id = o["_id"]?.stringValue
        version = try string("version", in: o)
        createdDate = try date("createdDate", in: o)
        sendNotification = try optional("sendNotification", in: o, bool) ?? false
        otp = try optional("otp", in: o, string) ?? ""
        guard case .object(let s)? = o["status"] else { throw fail("'status' must be an object") }
        let stateText = try string("state", in: s)
        guard let state = CommandState(rawValue: stateText) else {
            throw fail("unknown status.state '\(stateText)' (known: Pending, InProgress, Success, Error)")
        }
        status = CommandStatus(state: state, message: try optional("message", in: s, string) ?? "")
        guard case .object(let a)? = o["action"], a.count == 1, let (key, value) = a.first, case .object(let f) = value else {
            throw fail("'action' must be an object with one key")
        }
        switch key {
        case "bolus": action = .bolus(amountInUnits: try number("amountInUnits", in: f))
        case "carbs":
            action = .carbs(amountInGrams: try number("amountInGrams", in: f),
                            absorptionTime: try optional("absorptionTime", in: f, number),
                            startDate: try optional("startDate", in: f, date))
        case "override":
            action = .override(name: try string("name", in: f), durationTime: try optional("durationTime", in: f, number),
                               remoteAddress: try optional("remoteAddress", in: f, string) ?? "")
        case "cancelOverride": action = .cancelOverride(remoteAddress: try optional("remoteAddress", in: f, string) ?? "")
        case "closedLoop": action = .closedLoop(active: try bool("active", in: f))
        case "autobolus": action = .autobolus(active: try bool("active", in: f))
        default:
            throw fail("unknown action '\(key)' (known: bolus, carbs, override, cancelOverride, closedLoop, autobolus)")
        }
    }
}

extension RemoteAction {
    /// The action's inner object, keys in §5.3 order, optional fields left out when nil.
    func encodedFields(utcOffsetMinutes: Int) -> String {
        let j = LoopCommand.jsonString, n = RemoteCommand.wireNumber
        var fields: [String] = []
        switch self {
        case .bolus(let units):
            fields.append("\"amountInUnits\":" + n(units))
        case .carbs(let grams, let seconds, let start):
            fields.append("\"amountInGrams\":" + n(grams))
            if let seconds { fields.append("\"absorptionTime\":" + n(seconds)) }
            if let start { fields.append("\"startDate\":" + j(RemoteCommand.wireDate(start, utcOffsetMinutes: utcOffsetMinutes))) }
        case .override(let name, let seconds, let address):
            fields.append("\"name\":" + j(name))
            if let seconds { fields.append("\"durationTime\":" + n(seconds)) }
            fields.append("\"remoteAddress\":" + j(address))
        case .cancelOverride(let address):
            fields.append("\"remoteAddress\":" + j(address))
        case .closedLoop(let on), .autobolus(let on):
            fields.append("\"active\":" + (on ? "true" : "false"))
        }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
