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

/// A `store` write refused because the script would keep more than its quota.
struct StoreQuotaExceeded: Error, CustomStringConvertible {
    var script: String
    var key: String
    var wouldUse: Int
    var quota: StoreQuota

    var description: String {
        "store quota exceeded: writing \(String(reflecting: key)) would make \(script) keep "
            + "\(Quantities.formatSize(wouldUse)), over its limit of \(Quantities.formatSize(quota.bytes)) "
            + "(\(quota.source); nothing was written)"
    }
}
