import Foundation

/// The Nightscout endpoints that carry Loop remote commands (`/api/v2/notifications/loop`,
/// `/api/v2/remotecommands`), which the `http` module refuses on any host: boluses and carbs go
/// only through the client methods (`home:bolus`, `home:remote_command`) and so through the
/// host's remote-command guard, its limits and its audit log.
///
/// The path is normalised before it is compared, so spelling does not get around it: percent
/// escapes decoded (repeatedly, for `%252F`), case folded, `\` read as `/`, empty segments (`//`),
/// `.` and `..` resolved, `;parameters` dropped. A site below a path prefix (`/ns/api/v2/…`) is
/// matched too.
enum RemoteCommandEndpoints {
    /// Segment sequences that mark a remote-command endpoint, wherever they appear in the path.
    static let markers: [[String]] = [["notifications", "loop"], ["remotecommands"]]

    /// Whether `url` (absolute, as given to the transport) addresses a remote-command endpoint.
    static func matches(url: String) -> Bool {
        matches(path: path(of: url))
    }

    /// Whether the path (percent-encoded, as on the wire) is a remote-command endpoint.
    static func matches(path: String) -> Bool {
        let segments = normalisedSegments(path)
        for marker in markers where segments.count >= marker.count {
            for start in 0...(segments.count - marker.count) where Array(segments[start..<start + marker.count]) == marker {
                return true
            }
        }
        return false
    }

    /// The segments of `path` after normalisation (see the type's description).
    static func normalisedSegments(_ path: String) -> [String] {
        var text = path
        for _ in 0..<4 {
            guard let decoded = text.removingPercentEncoding, decoded != text else { break }
            text = decoded
        }
        text = text.lowercased().replacingOccurrences(of: "\\", with: "/")
        var segments: [String] = []
        for raw in text.split(separator: "/", omittingEmptySubsequences: true) {
            var segment = String(raw)
            if let semicolon = segment.firstIndex(of: ";") { segment = String(segment[..<semicolon]) }
            segment = segment.trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
            switch segment {
            case "", ".": continue
            case "..": if !segments.isEmpty { segments.removeLast() }
            default: segments.append(segment)
            }
        }
        return segments
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
