import LookoutWire
import Lua

extension LuaValue {
    /// A JSON value as a Lua value (`null` as `json.null`, arrays marked as arrays).
    init(json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .text(s)
        case .array(let a): self = .array(a.map(LuaValue.init(json:)))
        case .object(let o): self = .object(o.mapValues(LuaValue.init(json:)))
        }
    }
}
