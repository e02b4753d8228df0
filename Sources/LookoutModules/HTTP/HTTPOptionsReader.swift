import Foundation
import Lua

/// Reads the options table of `http.request{…}` (and of the shorthands) straight from the Lua
/// stack, so `json=` is encoded by the C codec exactly as `json.encode` would (a LuaValue copy
/// would lose `json.empty_array` and `array_mt`). Every mistake raises `bad argument #n to
/// 'http.x' (opts.headers.Accept: …)`; values of headers are never repeated in messages.
struct HTTPOptionsReader {
    /// All option names, for messages.
    static let names = ["body", "follow_redirects", "headers", "json", "max_size", "method", "query", "timeout", "url"]

    let call: LuaCall
    /// The argument number of the table.
    let argument: Int
    /// Options this function accepts (the shorthands take `url` and `method` from elsewhere).
    let allowed: [String]

    private var stack: LuaStack { call.stack }
    private var table: Int32 { call.index(argument) }

    /// Fills `spec` from the table; absent options keep the values `spec` has.
    /// - Parameter requireURL: `opts.url` must be given (`http.request`).
    func read(into spec: inout HTTPRequestSpec, requireURL: Bool = false) throws(LuaRaise) {
        guard stack.kind(at: table) == .table else {
            throw call.argumentError(argument, "table expected, got \(typeName(table))")
        }
        try checkNames()
        if let url = try string("url") {
            spec.url = url
        } else if requireURL {
            throw error("opts.url", "string expected, got nil")
        }
        if let method = try string("method") {
            let upper = method.uppercased()
            guard !upper.isEmpty, upper.utf8.allSatisfy(HTTPOptionsReader.isTokenByte) else {
                throw error("opts.method", "invalid method \(String(reflecting: method))")
            }
            spec.method = upper
        }
        if try present("headers") { spec.headers = try pairs("headers", allowBooleans: false) }
        if try present("query") { spec.query = try pairs("query", allowBooleans: true) }
        if try present("timeout") { spec.timeout = try duration("timeout") }
        if try present("max_size") { spec.maxSize = try size("max_size") }
        if try present("follow_redirects") { spec.followRedirects = try boolean("follow_redirects") }
        let hasBody = try present("body")
        if try present("json") {
            guard !hasBody else { throw call.argumentError(argument, "opts.body and opts.json cannot both be given") }
            try withField("json") { () throws(LuaRaise) in
                do throws(LuaJSONError) {
                    spec.body = try LuaJSONCodec.encode(stack, at: -1)
                } catch {
                    throw self.error("opts.json", error.message)
                }
            }
            spec.impliedContentType = "application/json"
        } else if hasBody {
            try body(into: &spec)
        }
    }

    /// Reads `body`: a string as it is, or a table as a form.
    private func body(into spec: inout HTTPRequestSpec) throws(LuaRaise) {
        let type = try withField("body") { () throws(LuaRaise) in call.stack.kind(at: -1) }
        switch type {
        case .string:
            spec.body = try withField("body") { () throws(LuaRaise) in stack.bytes(at: -1) ?? [] }
        case .table:
            spec.body = Array(HTTPRequestSpec.formEncoded(try pairs("body", allowBooleans: true)).utf8)
            spec.impliedContentType = "application/x-www-form-urlencoded"
        default:
            let got = try withField("body") { () throws(LuaRaise) in typeName(-1) }
            throw error("opts.body", "string or table expected, got \(got)")
        }
    }

    // MARK: Fields

    private func checkNames() throws(LuaRaise) {
        guard stack.ensure(3) else { throw LuaRaise("stack overflow") }
        stack.pushNil()
        while stack.next(in: table) {
            stack.pop()
            guard let key = stack.string(at: -1) else {
                let keyType = typeName(-1)
                stack.pop()
                throw call.argumentError(argument, "opts: expected a table of named options, found a \(keyType) key")
            }
            guard allowed.contains(key) else {
                stack.pop()
                throw call.argumentError(argument, "unknown option '\(key)' (known: \(allowed.joined(separator: ", ")))")
            }
        }
    }

    /// Runs `body` with `opts[name]` on top of the stack, then pops it.
    private func withField<T>(_ name: String, _ body: () throws(LuaRaise) -> T) throws(LuaRaise) -> T {
        stack.rawField(name, of: table)
        defer { stack.pop() }
        return try body()
    }

    private func present(_ name: String) throws(LuaRaise) -> Bool {
        try withField(name) { () throws(LuaRaise) in ![.nil, .none].contains(call.stack.kind(at: -1)) }
    }

    private func string(_ name: String) throws(LuaRaise) -> String? {
        try withField(name) { () throws(LuaRaise) in
            switch call.stack.kind(at: -1) {
            case .nil: return nil
            case .string: return stack.string(at: -1)
            default: throw error("opts.\(name)", "string expected, got \(typeName(-1))")
            }
        }
    }

    private func boolean(_ name: String) throws(LuaRaise) -> Bool {
        try withField(name) { () throws(LuaRaise) in
            guard call.stack.kind(at: -1) == .boolean else {
                throw error("opts.\(name)", "boolean expected, got \(typeName(-1))")
            }
            return call.stack.boolean(at: -1)
        }
    }

    private func duration(_ name: String) throws(LuaRaise) -> Double {
        try withField(name) { () throws(LuaRaise) in
            let seconds: Double?
            if let number = stack.number(at: -1) {
                seconds = number
            } else if let text = stack.string(at: -1) {
                seconds = Quantities.parseDuration(text)
            } else {
                throw error("opts.\(name)", "number or duration string expected, got \(typeName(-1))")
            }
            guard let seconds, seconds.isFinite, seconds > 0 else {
                throw error("opts.\(name)", "expected a duration above zero: seconds or text such as \"30s\", \"2m\"")
            }
            guard let ok = LuaRange.timeout.check(seconds) else {
                throw call.argumentError(argument, LuaRange.timeout.problem("opts.\(name)", got: LuaRange.numberText(seconds)))
            }
            return ok
        }
    }

    private func size(_ name: String) throws(LuaRaise) -> Int {
        try withField(name) { () throws(LuaRaise) in
            let bytes: Int?
            if call.stack.kind(at: -1) == .number {
                bytes = stack.integer(at: -1).flatMap { Int(exactly: $0) }
            } else if let text = stack.string(at: -1) {
                bytes = Quantities.parseSize(text)
            } else {
                throw error("opts.\(name)", "integer or size string expected, got \(typeName(-1))")
            }
            guard let bytes, bytes > 0 else {
                throw error("opts.\(name)", "expected a size above zero: bytes or text such as \"512KB\", \"10MB\"")
            }
            guard LuaRange.bodySize.check(Int64(bytes)) != nil else {
                throw call.argumentError(argument, LuaRange.bodySize.problem("opts.\(name)", got: String(bytes)))
            }
            return bytes
        }
    }

    /// A table of names to strings, numbers (booleans if allowed) or arrays of them, as
    /// (name, text) pairs sorted by name; arrays give one pair per item.
    private func pairs(_ name: String, allowBooleans: Bool) throws(LuaRaise) -> [(name: String, value: String)] {
        let path = "opts.\(name)"
        let value = try withField(name) { () throws(LuaRaise) in
            guard call.stack.kind(at: -1) == .table else { throw error(path, "table expected, got \(typeName(-1))") }
            do throws(LuaConversionError) {
                return try stack.value(at: -1, path: path, depthLimit: 3)
            } catch {
                throw call.argumentError(argument, error.description)
            }
        }
        let fields: [String: LuaValue]
        switch value {
        case .object(let o): fields = o
        default: throw error(path, "expected a table of names and values, not a list")
        }
        var result: [(name: String, value: String)] = []
        for (key, item) in fields.sorted(by: { $0.key < $1.key }) {
            let itemPath = HTTPOptionsReader.childPath(path, key)
            if name == "headers", key.isEmpty || !key.utf8.allSatisfy(HTTPOptionsReader.isTokenByte) {
                throw error(itemPath, "invalid header name")
            }
            let items: [(LuaValue, String)]
            if case .array(let list) = item {
                items = list.enumerated().map { ($0.element, "\(itemPath)[\($0.offset + 1)]") }
            } else {
                items = [(item, itemPath)]
            }
            for (element, elementPath) in items {
                let text = try scalarText(element, path: elementPath, allowBooleans: allowBooleans)
                if name == "headers", text.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 }) {
                    throw error(elementPath, "header values cannot contain line breaks or NUL")
                }
                result.append((name: key, value: text))
            }
        }
        return result
    }

    private func scalarText(_ value: LuaValue, path: String, allowBooleans: Bool) throws(LuaRaise) -> String {
        switch value {
        case .string(let s): return s.description
        case .int(let i): return String(i)
        case .double(let d): return HTTPOptionsReader.numberText(d)
        case .bool(let b) where allowBooleans: return b ? "true" : "false"
        default:
            let expected = allowBooleans ? "string, number or boolean" : "string or number"
            throw error(path, "\(expected) expected, got \(value.typeName)")
        }
    }

    // MARK: Helpers

    private func error(_ path: String, _ message: String) -> LuaRaise {
        call.argumentError(argument, "\(path): \(message)")
    }

    private func typeName(_ index: Int32) -> String {
        call.stack.kind(at: index) == .none ? "no value" : stack.typeName(at: index)
    }

    /// `opts.headers.Accept`, or `opts.headers["X-Api-Key"]` when the name is not an identifier.
    static func childPath(_ path: String, _ key: String) -> String {
        let isIdentifier = key.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
            && key.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
        return isIdentifier ? "\(path).\(key)" : "\(path)[\(String(reflecting: key))]"
    }

    /// `tostring` of a Lua float: `%.14g`, with `.0` when it reads like an integer.
    static func numberText(_ d: Double) -> String {
        var text = String(format: "%.14g", d)
        if text.allSatisfy({ $0.isNumber || $0 == "-" }) { text += ".0" }
        return text
    }

    /// RFC 9110 token characters (header names, methods).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
