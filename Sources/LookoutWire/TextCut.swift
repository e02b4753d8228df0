import Foundation

/// Cuts text to a number of UTF-8 bytes, whole characters, with a marker: `…(+N bytes)`.
public enum TextCut {
    /// `text` when it has at most `limit` UTF-8 bytes; otherwise its first bytes (never half a
    /// character) followed by `…(+N bytes)`, N the bytes cut, the whole at most `limit` bytes
    /// (when `limit` leaves room for the marker).
    public static func bounded(_ text: String, to limit: Int) -> String {
        let bytes = text.utf8.count
        guard bytes > limit else { return text }
        // The marker's own length depends on N; reserve room for the longest it can be.
        let room = max(0, limit - "…(+\(bytes) bytes)".utf8.count)
        let utf8 = text.utf8
        var end = utf8.index(utf8.startIndex, offsetBy: room)
        // Back up to the start of a scalar (never cut a character's bytes in two).
        while end > utf8.startIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        let kept = utf8.distance(from: utf8.startIndex, to: end)
        return String(decoding: utf8[..<end], as: UTF8.self) + "…(+\(bytes - kept) bytes)"
    }
}
