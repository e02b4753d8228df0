import Foundation
import Lua

/// How much one script may keep waiting in the outbox (`[limits] outbox_items` and
/// `outbox_bytes` in config.toml): its pending and failed items, and their bodies' bytes. Sent
/// items keep no body and do not count.
///
/// Checked by every outbox store in the transaction that inserts (`OutboxQuota.check`), so it
/// holds for every backend and two writers cannot both slip under it.
public struct OutboxQuota: Sendable, Equatable {
    /// Items one script may have pending or failed; nil for no limit.
    public var items: Int?
    /// Bytes of bodies one script may have pending or failed; nil for no limit.
    public var bytes: Int?

    /// A quota of `items` and `bytes` (nil: no limit on that).
    public init(items: Int?, bytes: Int?) {
        self.items = items
        self.bytes = bytes
    }

    /// Throws `OutboxQuotaExceeded` when `source`, which has `queuedItems` items of `queuedBytes`
    /// bytes waiting, may not add an item of `bodyBytes`.
    public func check(source: String?, bodyBytes: Int, queuedItems: Int, queuedBytes: Int) throws(OutboxQuotaExceeded) {
        let source = source ?? "?"
        if let items, queuedItems + 1 > items {
            throw OutboxQuotaExceeded(source: source, limit: "\(items) items", key: "limits.outbox_items",
                                      situation: "\(source) already has \(queuedItems) items waiting to be sent")
        }
        if let bytes, queuedBytes + bodyBytes > bytes {
            throw OutboxQuotaExceeded(source: source, limit: Self.size(bytes), key: "limits.outbox_bytes",
                                      situation: "this item (\(Self.size(bodyBytes))) would take what \(source) has waiting "
                                          + "to be sent from \(Self.size(queuedBytes)) to \(Self.size(queuedBytes + bodyBytes))")
        }
    }

    static func size(_ bytes: Int) -> String { Quantities.formatSize(bytes) }
}

/// An outbox item refused because its script's waiting items are at the quota. Nothing was
/// queued and nothing queued was dropped; scripts see `err.code == "quota"`.
public struct OutboxQuotaExceeded: Error, Sendable, Equatable, CustomStringConvertible {
    /// The script whose quota is full.
    public var source: String
    /// The limit (`1000 items`, `16MB`).
    public var limit: String
    /// The config key that sets it.
    public var key: String
    /// What the script holds now and what the item would add.
    public var situation: String

    public var description: String {
        "outbox quota exceeded: \(situation), over its limit of \(limit) (\(key) in config.toml); "
            + "nothing was queued and nothing queued was dropped"
    }
}

extension OutboxQuotaExceeded: LuaErrorConvertible {
    /// `code = "quota"`, not retryable (it passes only when queued items are sent or dropped).
    public var luaError: LuaErrorInfo { LuaErrorInfo(code: "quota", message: description) }
}
