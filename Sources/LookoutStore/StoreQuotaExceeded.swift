import LookoutConfig
import Lua

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
