import Lua

/// `http`: plain HTTP(S) requests for scripts (`http.request`, `get`, `post`, `put`, `delete`).
///
/// Requests look synchronous to scripts and wait without blocking other tasks. Non-2xx answers
/// are answers (`resp.status`); network problems, timeouts, bodies over `max_size` and bad URLs
/// return `nil, err`. See `Stubs/http.lua` for the script-facing documentation.
public struct HTTPModule: LuaModule {
    public let name = "http"
    public var stub: String { String(decoding: PackageResources.http_lua, as: UTF8.self) }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.pushLibrary([
            "request": { call in
                var spec = HTTPRequestSpec()
                try HTTPOptionsReader(call: call, argument: 1, allowed: HTTPOptionsReader.names)
                    .read(into: &spec, requireURL: true)
                return try HTTPModule.send(call, spec)
            },
            "get": { call in try HTTPModule.shorthand(call, method: "GET", takesBody: false) },
            "delete": { call in try HTTPModule.shorthand(call, method: "DELETE", takesBody: false) },
            "post": { call in try HTTPModule.shorthand(call, method: "POST", takesBody: true) },
            "put": { call in try HTTPModule.shorthand(call, method: "PUT", takesBody: true) },
        ], prefix: "http.", on: stack)
    }

    /// Options the shorthands accept in their table (the URL and method come from elsewhere).
    static let shorthandOptions = HTTPOptionsReader.names.filter { $0 != "url" && $0 != "method" }

    /// `http.get(url [, opts])`, `http.post(url [, body_or_opts])`, …
    static func shorthand(_ call: LuaCall, method: String, takesBody: Bool) throws -> LuaReturn {
        var spec = HTTPRequestSpec()
        spec.url = try call.string(1)
        spec.method = method
        if !call.isNil(2) {
            if takesBody, let body = call.stack.bytes(at: call.index(2)) {
                spec.body = body
            } else if call.stack.kind(at: call.index(2)) == .table {
                try HTTPOptionsReader(call: call, argument: 2, allowed: shorthandOptions).read(into: &spec)
            } else {
                let expected = takesBody ? "string or table" : "table"
                throw call.argumentError(2, "\(expected) expected, got \(call.stack.typeName(at: call.index(2)))")
            }
        }
        return try send(call, spec)
    }

    /// Starts the request and waits for the whole answer; a bad URL returns `nil, err` at once. The
    /// request is one of the script's requests in flight (``LuaCall/request(_:_:deliver:)``), and
    /// its body and the answer's count against its host memory budget (``LuaEngine/hostBytes``).
    static func send(_ call: LuaCall, _ spec: HTTPRequestSpec) throws -> LuaReturn {
        let request: HTTPPreparedRequest
        do {
            request = try spec.prepared()
        } catch {
            return call.failure(error.luaError)
        }
        let engine = call.engine
        let budget = engine.hostBytes
        guard let outgoing = budget.reserve(request.body?.count ?? 0) else {
            return call.failure(HTTPFailure.memory(request, what: "request body", limit: budget.limit).luaError)
        }
        return try call.request(request.summary, {
            let result = try await HTTPTransport.perform(request, budget: budget)
            withExtendedLifetime(outgoing) {}  // the request body counts until the exchange ended
            return result
        }) { stack, result in
            pushResponse(result, on: stack, engine: engine)
            return 1
        }
    }

    /// Pushes `{status, headers, body [, json | json_error]}`. A JSON body (by content type) is
    /// decoded with the C codec on the main thread (the task is suspended and cannot run calls).
    static func pushResponse(_ result: HTTPResult, on stack: LuaStack, engine: LuaEngine) {
        guard stack.ensure(4) else { return stack.pushNil() }
        stack.pushTable(fields: 5)
        stack.push(result.status)
        stack.setField("status", in: -2)
        stack.push(.object(result.joinedHeaders.mapValues(LuaValue.text)))
        stack.setField("headers", in: -2)
        stack.push(bytes: result.body)
        stack.setField("body", in: -2)
        guard result.isJSON, !result.body.isEmpty else { return }
        do {
            try LuaJSONCodec.decode(result.body, onto: stack, worker: LuaStack(engine.L))
            stack.setField("json", in: -2)
        } catch {
            stack.push(error.message)
            stack.setField("json_error", in: -2)
        }
    }

    /// Makes a value from its parts.
    public init() {

    }
}
