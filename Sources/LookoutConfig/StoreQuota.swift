import Foundation
import Lua

/// How much one script may keep in `store` (`[limits] store` in config.toml): the bytes of its
/// keys and JSON values together.
public struct StoreQuota: Sendable, Equatable {
    /// The limit in bytes.
    public var bytes: Int
    /// Where the limit comes from, for the error message (`limits.store in config.toml`).
    public var source: String

    /// A quota of `bytes`, set by `source`.
    public init(bytes: Int, source: String = "limits.store in config.toml") {
        self.bytes = bytes
        self.source = source
    }
}
