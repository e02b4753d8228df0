import Foundation
import LookoutWire

/// Single-pass decoding of a v3 envelope `{"status":…,"result":[…]}` whose documents are a
/// `ScannableDocument` (HISTORY pages of entries): no tree, no dictionary per document.
enum V3PageScanner {
    /// The `result` documents of `body`, exactly as `V3ParsedResponse.decodeResult([D].self)`
    /// decodes them, or `nil` when `D` is not scannable or the body needs the tree path (malformed
    /// JSON, a name given twice, a number Foundation might read differently, another shape): the
    /// caller then decodes it that way, with that way's errors.
    static func documents<D: NightscoutDocument>(_ type: D.Type, from body: Data) -> [D]? {
        guard let scannable = D.self as? any ScannableDocument.Type else { return nil }
        return documents(scannable, body, as: D.self)
    }

    /// `documents` with `S`, the scannable type that `D` is.
    private static func documents<S: ScannableDocument, D>(_ type: S.Type, _ body: Data, as: D.Type) -> [D]? {
        guard S.self == D.self else { return nil }
        return body.withUnsafeBytes { raw -> [D]? in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
            do {
                let docs: [S] = try envelope(&parser)
                return parser.exact ? unsafeBitCast(docs, to: [D].self) : nil  // the same type
            } catch {
                return nil
            }
        }
    }

    /// The envelope's `result`, with `status` an integer and every other member skipped, as
    /// `V3Envelope` decodes it.
    private static func envelope<S: ScannableDocument>(_ parser: inout JSONParser) throws -> [S] {
        parser.skipWhitespace()
        guard parser.at(UInt8(ascii: "{")) else { throw DocumentScanFallback() }
        var result: [S]?
        var status = false
        var others: Set<String> = []
        try parser.scanMembers { p, name in
            if name.equals("result") {
                guard result == nil, p.at(UInt8(ascii: "[")) else { throw DocumentScanFallback() }
                var docs: [S] = []
                try p.scanElements { p in docs.append(try S.scan(&p)) }
                result = docs
            } else if name.equals("status") {
                guard !status, case .int(let s) = try p.parseValue(), Int(exactly: s) != nil else { throw DocumentScanFallback() }
                status = true
            } else {
                _ = try p.parseValue()
                guard others.insert(String(decoding: name, as: UTF8.self)).inserted else { throw DocumentScanFallback() }
            }
        }
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count, status, let result else { throw DocumentScanFallback() }
        return result
    }

    /// The number of elements of the envelope's top-level `result` array, found by skimming the
    /// bytes (strings and nesting followed, nothing built or checked), or `nil` when there is
    /// none. Only a hint: `history` uses it to request the next page of a full page before
    /// decoding it, and drops that request when the decoded page says otherwise.
    static func resultCountHint(_ body: Data) -> Int? {
        body.withUnsafeBytes { raw -> Int? in
            let b = raw.bindMemory(to: UInt8.self)
            var i = 0, depth = 0
            var lastKeyAtTop: Range<Int>? = nil  // the last string read at depth 1
            var count: Int? = nil
            var inResult = false, empty = true
            while i < b.count {
                let c = b[i]
                switch c {
                case UInt8(ascii: "\""):
                    let start = i + 1
                    i += 1
                    while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
                    if depth == 1 { lastKeyAtTop = start..<min(i, b.count) }
                    if inResult && depth == 2 { empty = false }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if inResult && depth == 2 { empty = false }
                    depth += 1
                    if depth == 2, c == UInt8(ascii: "["), count == nil, let k = lastKeyAtTop,
                       UnsafeBufferPointer(rebasing: b[k]).equals("result") {
                        inResult = true
                        count = 0
                    }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if inResult && depth == 1 {
                        inResult = false
                        count = empty ? 0 : count! + 1
                    }
                case UInt8(ascii: ","):
                    if inResult && depth == 2 { count! += 1 }
                    if depth == 1 { lastKeyAtTop = nil }
                case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ":"):
                    break
                default:
                    if inResult && depth == 2 { empty = false }
                }
                i += 1
            }
            return inResult ? nil : count
        }
    }
}
