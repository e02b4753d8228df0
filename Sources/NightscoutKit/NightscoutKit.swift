/// NightscoutKit: a client for Nightscout servers (API v1 and v3), with typed models and the
/// authentication schemes Nightscout accepts. It knows nothing about Lua; `LookoutModules` wraps it (the `nightscout` module).
public enum NightscoutKit {
    /// The library version, sent in `User-Agent`.
    public static let version = "0.1.0"
}
