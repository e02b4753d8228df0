import LookoutWire

/// What Nightscout's `purifier.purifyObject` does to v1 writes (POST of treatments, entries,
/// devicestatus and profiles): every string field, at any depth, goes through DOMPurify's default
/// `sanitize`. This is a model of that, not DOMPurify itself:
/// - a string without `<` is returned unchanged (DOMPurify's fast path);
/// - otherwise it is parsed as an HTML fragment and serialised again: tag names lowercased,
///   attributes outside the allow-list (`on*` handlers, …) dropped, URL attributes with an unsafe
///   scheme (`javascript:`) dropped, `<script>`/`<iframe>`/`<style>`… removed with their content,
///   unknown elements and comments removed (their text kept), unclosed elements closed, and text
///   re-escaped (`&` → `&amp;`, `<` → `&lt;`, `>` → `&gt;`), so `BG < 70` is stored as `BG &lt; 70`,
///   as on the real server.
///
/// Example: `<IMG SRC="javascript:alert('XSS')">` becomes `<img>`.
enum NSPurifier {
    /// Elements removed together with everything inside them.
    static let forbidContents: Set<String> = [
        "script", "style", "iframe", "noscript", "noembed", "noframes", "template", "title", "xmp", "plaintext",
        "textarea", "object", "embed", "svg", "math", "head", "audio", "video",
    ]
    /// Elements kept (a subset of DOMPurify's default HTML allow-list).
    static let allowedTags: Set<String> = [
        "a", "abbr", "acronym", "address", "area", "article", "aside", "b", "bdi", "bdo", "big", "blockquote", "br",
        "caption", "center", "cite", "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt",
        "em", "figcaption", "figure", "font", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "i",
        "img", "ins", "kbd", "label", "li", "main", "mark", "nav", "ol", "p", "pre", "q", "s", "samp", "section",
        "small", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
        "thead", "time", "tr", "tt", "u", "ul", "var", "wbr",
    ]
    /// Elements without an end tag.
    static let voidTags: Set<String> = ["area", "br", "col", "hr", "img", "wbr"]
    /// Attributes kept (a subset of DOMPurify's default), plus `data-*` and `aria-*`.
    static let allowedAttributes: Set<String> = [
        "align", "alt", "bgcolor", "border", "cite", "class", "color", "cols", "colspan", "datetime", "dir",
        "face", "height", "href", "hreflang", "id", "lang", "name", "rel", "role", "rows", "rowspan", "size",
        "span", "src", "start", "style", "summary", "tabindex", "title", "type", "valign", "value", "width",
    ]
    /// Attributes holding a URL, checked against DOMPurify's `IS_ALLOWED_URI`.
    static let uriAttributes: Set<String> = ["href", "src", "cite", "action", "background", "poster"]

    /// Sanitises every string of a JSON value (objects and arrays recursively).
    static func purify(_ v: JSONValue) -> JSONValue {
        switch v {
        case .string(let s): return .string(sanitize(s))
        case .array(let a): return .array(a.map(purify))
        case .object(let o): return .object(o.mapValues(purify))
        default: return v
        }
    }

    /// Sanitises a document's fields.
    static func purify(_ f: [String: JSONValue]) -> [String: JSONValue] { f.mapValues(purify) }

    /// DOMPurify-like `sanitize` of one string.
    static func sanitize(_ input: String) -> String {
        guard input.contains("<") else { return input }
        let c = Array(input.unicodeScalars)
        var out = ""
        var open: [String] = []
        var i = 0
        func isLetter(_ k: Int) -> Bool { k < c.count && c[k].properties.isAlphabetic && c[k].isASCII }
        while i < c.count {
            guard c[i] == "<" else {
                var j = i
                while j < c.count, c[j] != "<" { j += 1 }
                out += escapeText(decodeEntities(String(String.UnicodeScalarView(c[i..<j]))))
                i = j
                continue
            }
            if i + 3 < c.count, c[i + 1] == "!", c[i + 2] == "-", c[i + 3] == "-" {  // comment: dropped
                i = find("-->", in: c, from: i + 4).map { $0 + 3 } ?? c.count
            } else if i + 1 < c.count, c[i + 1] == "!" || c[i + 1] == "?" {  // bogus comment: dropped
                i = find(">", in: c, from: i + 1).map { $0 + 1 } ?? c.count
            } else if i + 1 < c.count, c[i + 1] == "/", isLetter(i + 2) {  // end tag
                let (name, _, next) = parseTag(c, from: i + 2)
                i = next
                if let k = open.lastIndex(of: name) {
                    for t in open[k...].reversed() { out += "</\(t)>" }
                    open.removeSubrange(k...)
                }
            } else if isLetter(i + 1) {  // start tag
                let (name, attrs, next) = parseTag(c, from: i + 1)
                i = next
                if forbidContents.contains(name) {
                    i = skipContents(of: name, c, from: i)
                } else if allowedTags.contains(name) {
                    out += "<" + name
                    for (k, v) in attrs where keeps(attribute: k, value: v) { out += " \(k)=\"\(escapeAttribute(v))\"" }
                    out += ">"
                    if !voidTags.contains(name) { open.append(name) }
                }
            } else {  // a lone `<` is text
                out += "&lt;"
                i += 1
            }
        }
        for t in open.reversed() { out += "</\(t)>" }
        return out
    }

    /// Whether DOMPurify keeps an attribute.
    static func keeps(attribute name: String, value: String) -> Bool {
        guard allowedAttributes.contains(name) || name.hasPrefix("data-") || name.hasPrefix("aria-") else { return false }
        guard uriAttributes.contains(name) else { return true }
        let v = String(String.UnicodeScalarView(value.unicodeScalars.filter { $0.value > 0x20 })).lowercased()
        guard let colon = v.firstIndex(of: ":") else { return true }
        let scheme = String(v[..<colon])
        if scheme.contains(where: { !($0.isLetter || $0 == "+" || $0 == "." || $0 == "-") }) { return true }
        return ["http", "https", "ftp", "ftps", "mailto", "tel", "callto", "sms", "cid", "xmpp", "matrix"].contains(scheme)
    }

    /// Parses `name attr="v" …>` starting at the name; returns the lowercased name, the
    /// attributes and the index after `>`.
    static func parseTag(_ c: [Unicode.Scalar], from start: Int) -> (String, [(String, String)], Int) {
        var i = start
        var name = ""
        while i < c.count, !c[i].properties.isWhitespace, c[i] != ">", c[i] != "/" {
            name.unicodeScalars.append(c[i])
            i += 1
        }
        var attrs: [(String, String)] = []
        while i < c.count, c[i] != ">" {
            if c[i].properties.isWhitespace || c[i] == "/" {
                i += 1
                continue
            }
            var key = ""
            while i < c.count, !c[i].properties.isWhitespace, c[i] != ">", c[i] != "=", c[i] != "/" {
                key.unicodeScalars.append(c[i])
                i += 1
            }
            while i < c.count, c[i].properties.isWhitespace { i += 1 }
            var value = ""
            if i < c.count, c[i] == "=" {
                i += 1
                while i < c.count, c[i].properties.isWhitespace { i += 1 }
                if i < c.count, c[i] == "\"" || c[i] == "'" {
                    let q = c[i]
                    i += 1
                    while i < c.count, c[i] != q {
                        value.unicodeScalars.append(c[i])
                        i += 1
                    }
                    i += 1
                } else {
                    while i < c.count, !c[i].properties.isWhitespace, c[i] != ">" {
                        value.unicodeScalars.append(c[i])
                        i += 1
                    }
                }
            }
            let k = key.lowercased()
            if !k.isEmpty, !attrs.contains(where: { $0.0 == k }) { attrs.append((k, decodeEntities(value))) }
        }
        return (name.lowercased(), attrs, min(i + 1, c.count))
    }

    /// The index after `</name…>`, or the end.
    static func skipContents(of name: String, _ c: [Unicode.Scalar], from start: Int) -> Int {
        var i = start
        while let lt = find("</", in: c, from: i) {
            let (n, _, next) = parseTag(c, from: lt + 2)
            if n == name { return next }
            i = lt + 2
        }
        return c.count
    }

    static func find(_ needle: String, in c: [Unicode.Scalar], from start: Int) -> Int? {
        let n = Array(needle.unicodeScalars)
        var i = start
        while i + n.count <= c.count {
            if c[i] == n[0], (1..<n.count).allSatisfy({ c[i + $0] == n[$0] }) { return i }
            i += 1
        }
        return nil
    }

    /// Decodes the common named and the numeric character references.
    static func decodeEntities(_ s: String) -> String {
        guard s.contains("&") else { return s }
        let named: [String: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}"]
        var out = ""
        var rest = Substring(s)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semi = after.prefix(10).firstIndex(of: ";") {
                let ref = String(after[..<semi])
                var decoded: String? = named[ref]
                if decoded == nil, ref.hasPrefix("#") {
                    let num = ref.dropFirst()
                    let code = num.first == "x" || num.first == "X" ? UInt32(num.dropFirst(), radix: 16) : UInt32(num)
                    decoded = code.flatMap(Unicode.Scalar.init).map { String($0) }
                }
                if let decoded {
                    out += decoded
                    rest = after[after.index(after: semi)...]
                    continue
                }
            }
            out += "&"
            rest = after
        }
        return out + rest
    }

    static func escapeText(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\u{A0}", with: "&nbsp;")
    }

    static func escapeAttribute(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "\u{A0}", with: "&nbsp;")
    }
}
