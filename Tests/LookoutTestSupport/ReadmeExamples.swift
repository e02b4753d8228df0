import Foundation

/// The README's code examples, exactly as printed, for tests that run them.
public enum ReadmeExamples {
    /// The repository's README.md (found from this file's path).
    public static var readme: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }

    /// The first ```` ```lua ```` block after the heading `heading` (a whole line such as
    /// `### Signal K`), without its fences; nil when there is none.
    public static func luaBlock(after heading: String) -> String? {
        let text = readme
        guard let h = text.range(of: "\n" + heading + "\n"),
              let open = text.range(of: "```lua\n", range: h.upperBound..<text.endIndex),
              let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound]) + "\n"
    }
}
