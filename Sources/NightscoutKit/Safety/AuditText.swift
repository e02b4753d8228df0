import Foundation
import LookoutWire

/// How much text one audit entry may hold. Scripts choose override names and so part of every
/// refusal's reason and detail; without a bound one refused 4 MiB name writes 12 MiB into a log
/// nobody may delete. `AuditEntry.init` cuts every field to these sizes (on a UTF-8 character
/// boundary, the rest replaced by `…(+N bytes)`), so every backend stores entries of bounded size.
public enum AuditText {
    /// Bytes kept of a short field: the site, the source, the refusal code, an override name.
    public static let fieldLimit = 256
    /// Bytes kept of a text field: the refusal reason, the detail.
    public static let textLimit = 1024

    /// `text` when it has at most `limit` UTF-8 bytes; otherwise its first bytes (whole
    /// characters) followed by `…(+N bytes)`, N the bytes cut, the whole at most `limit` bytes.
    public static func bounded(_ text: String, to limit: Int) -> String { TextCut.bounded(text, to: limit) }

    /// `bounded(_:to:)` for an optional text.
    public static func bounded(_ text: String?, to limit: Int) -> String? { text.map { bounded($0, to: limit) } }
}

extension AuditCommand {
    /// The fields with the override name cut to `AuditText.fieldLimit` bytes (the only text a
    /// script chooses; `TherapyLimits` refuses longer allowed names, so an allowed command is
    /// never cut).
    public var bounded: AuditCommand {
        var copy = self
        copy.name = AuditText.bounded(name, to: AuditText.fieldLimit)
        copy.kind = AuditText.bounded(kind, to: AuditText.fieldLimit)
        return copy
    }
}
