/// A module scripts get with `require "name"` (also as `require "lookout.name"`).
///
/// Modules load lazily: the value is built the first time a script requires it, except the
/// conveniences that are also globals (`json`, `timer`, `task`, `log`).
public protocol LuaModule: Sendable {
    /// The name for `require`.
    var name: String { get }
    /// The LuaLS stub (`---@meta name`) documenting the module; it is also the `help()` text.
    var stub: String { get }
    /// Whether the module is also a global when conveniences are on.
    var isGlobal: Bool { get }
    /// Pushes the module's value (usually a table of functions) onto `stack`.
    func push(into engine: LuaEngine, stack: LuaStack) throws
}

extension LuaModule {
    /// Modules are not globals unless they say so.
    public var isGlobal: Bool { false }
}
