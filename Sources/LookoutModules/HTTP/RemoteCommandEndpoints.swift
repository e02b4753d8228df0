import Foundation

/// The Nightscout endpoints that carry Loop remote commands (`/api/v2/notifications/loop`,
/// `/api/v2/remotecommands`), which the `http` module refuses on any host, on the first request
/// and on every redirect hop: boluses and carbs go only through the client methods (`home:bolus`,
/// `home:remote_command`) and so through the host's remote-command guard, its limits and its
/// audit log.
///
/// The refusal follows the routing rules of Nightscout's server (Express, with its format
/// extensions) and of anything in front of it, not a list of spellings; it refuses every path
/// such a server could route to a remote-command handler (and some it would not):
/// - percent escapes decoded, repeatedly (`%252E` is `.`), also escapes of unreserved characters;
/// - case folded (Express routes case-insensitively);
/// - `\` read as `/`; empty segments (`//`, trailing `/`) dropped; `.` and `..` resolved;
/// - a segment names an endpoint part when it is that name followed by nothing, or by anything
///   that is not a letter, digit, `_` or `-` (a format extension `.json`, `;params`, `?`, spaces);
/// - the endpoint anywhere in the path, followed by anything (`/ns/api/v2/remotecommands/abc`).
enum RemoteCommandEndpoints {
    /// Segment sequences that mark a remote-command endpoint, wherever they appear in the path.
    static let markers: [[String]] = [["notifications", "loop"], ["remotecommands"]]

    /// How often escapes are decoded at most; a path still changing after that is refused.
    static let maxDecodingRounds = 8

    /// Whether `url` (absolute, as given to the transport) addresses a remote-command endpoint:
    /// its path read by hand, and as Foundation parses it (the transport's parser), either one.
    static func matches(url: String) -> Bool {
        if matches(path: path(of: url)) { return true }
        if let parsed = URL(string: url), matches(path: parsed.path(percentEncoded: true)) { return true }
        return false
    }

    /// Whether the path (percent-encoded, as on the wire) is a remote-command endpoint.
    static func matches(path: String) -> Bool {
        guard let segments = normalisedSegments(path) else { return true }
        for marker in markers where segments.count >= marker.count {
            for start in 0...(segments.count - marker.count)
            where zip(segments[start..<start + marker.count], marker).allSatisfy(names) {
                return true
            }
        }
        return false
    }

    /// Whether `segment` (normalised) routes like the path part `name`: `name` exactly, or
    /// `name` followed by a character no route name continues with (`remotecommands.json`).
    static func names(_ segment: String, _ name: String) -> Bool {
        guard segment.hasPrefix(name) else { return false }
        guard let next = segment.unicodeScalars.dropFirst(name.unicodeScalars.count).first else { return true }
        return !(CharacterSet.alphanumerics.contains(next) || next == "_" || next == "-")
    }

    /// The segments of `path` after normalisation (see the type's description), or nil when
    /// decoding does not settle within `maxDecodingRounds`.
    static func normalisedSegments(_ path: String) -> [String]? {
        var text = path
        var settled = false
        for _ in 0..<maxDecodingRounds {
            let decoded = decodeEscapes(text)
            if decoded == text { settled = true; break }
            text = decoded
        }
        guard settled else { return nil }
        text = text.lowercased().replacingOccurrences(of: "\\", with: "/")
        var segments: [String] = []
        for raw in text.split(separator: "/", omittingEmptySubsequences: true) {
            let segment = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
            switch segment {
            case "", ".": continue
            case "..": if !segments.isEmpty { segments.removeLast() }
            default: segments.append(segment)
            }
        }
        return segments
    }

    /// `text` with every valid `%XX` escape decoded (bytes that do not form UTF-8 stay escaped;
    /// a lone `%` stays as it is), so one bad escape does not hide the others.
    static func decodeEscapes(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let h = hex(bytes[i + 1]), let l = hex(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The path part of an absolute URL: after the authority, before `?` or `#`. Read by hand so
    /// that a URL Foundation would not parse is still checked.
    static func path(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "\\" }) else { return "" }
        rest = rest[slash...]
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        return String(rest)
    }
}
