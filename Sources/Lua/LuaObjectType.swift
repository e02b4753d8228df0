/// A kind of host object exposed to Lua as userdata: its metatable name, methods and hooks.
///
/// The metatable carries `__name`, `__index` (the methods), `__tostring`, `__gc`, `__close` and
/// `__metatable = false`, so scripts can neither inspect nor replace it.
public struct LuaObjectType: Sendable {
    /// Registry name of the metatable, e.g. `lookout.timer`.
    public let name: String
    /// How errors call it: `timer`, `signalk stream`.
    public let displayName: String

    /// Describes a type.
    public init(name: String, displayName: String) {
        self.name = name
        self.displayName = displayName
    }
}

/// A host object that can describe and close itself from Lua.
public protocol LuaObject: AnyObject {
    /// Text for `tostring(obj)`.
    var luaDescription: String { get }
    /// Called by `__close` (`local x <close> = …`) and when the script ends.
    func luaClose(engine: LuaEngine)
}
