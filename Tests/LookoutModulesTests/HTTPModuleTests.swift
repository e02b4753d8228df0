import Foundation
import LookoutWire
import HTTPTypes
import Hummingbird
import Logging
import LookoutTestSupport
import Lua
import NIOCore
import XCTest
@testable import LookoutConfig
@testable import LookoutModules


#if canImport(Glibc)
import Glibc
#endif

/// `http` against a local Hummingbird server on 127.0.0.1 (port chosen by the system).
final class HTTPModuleTests: XCTestCase {
    private var server: HTTPTestServer!
    private var gate: HTTPTestGate!

    /// One server for the whole test process, never stopped: stopping a Hummingbird server while
    /// a cancelled request's connection is still arriving traps inside NIO (NIOAsyncWriter deinit).
    private static let sharedServer = Task { try await HTTPTestServer.start(router: router(gate: currentGate)) }
    /// The gate of the running test (the server's handlers look it up per request).
    private static let currentGate = GateHolder()

    override func setUp() async throws {
        gate = HTTPTestGate()
        HTTPModuleTests.currentGate.set(gate)
        server = try await HTTPModuleTests.sharedServer.value
    }

    override func tearDown() async throws {
        gate.open()  // let the handler that never answers finish
    }

    // MARK: Server

    static func router(gate: GateHolder) -> Router<BasicRequestContext> {
        let router = Router()
        // Echoes method, query, chosen headers and body as JSON.
        router.on("/echo", method: .get) { request, context in try await echo(request, context) }
        router.on("/echo", method: .post) { request, context in try await echo(request, context) }
        router.on("/echo", method: .put) { request, context in try await echo(request, context) }
        router.on("/echo", method: .delete) { request, context in try await echo(request, context) }
        // Answers with exactly the bytes it received, as JSON.
        router.post("/mirror") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        router.get("/missing") { _, _ -> Response in
            Response(status: .notFound, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "nope")))
        }
        router.get("/bad-json") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "{oops")))
        }
        router.get("/repeated") { _, _ -> Response in
            var headers = HTTPFields()
            headers.append(HTTPField(name: HTTPField.Name("X-Multi")!, value: "a"))
            headers.append(HTTPField(name: HTTPField.Name("X-Multi")!, value: "b"))
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "ok")))
        }
        router.get("/slow") { _, _ -> Response in
            await gate.current.wait()
            return Response(status: .ok)
        }
        router.get("/big") { _, _ -> Response in
            Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: 4096)))
        }
        router.get("/stream") { _, _ -> Response in
            // No content-length: the limit must stop a streamed read.
            Response(status: .ok, body: ResponseBody { writer in
                for _ in 0..<64 { try await writer.write(ByteBuffer(repeating: UInt8(ascii: "y"), count: 1024)) }
                try await writer.finish(nil)
            })
        }
        router.get("/redirect/:n") { _, context -> Response in
            let n = Int(context.parameters.get("n") ?? "0") ?? 0
            return .redirect(to: n <= 1 ? "/echo?from=redirect" : "/redirect/\(n - 1)", type: .found)
        }
        return router
    }

    static func echo(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 1 << 20)
        var query: [String: [String]] = [:]
        for (name, value) in request.uri.queryParameters { query[String(name), default: []].append(String(value)) }
        var headers: [String: String] = [:]
        for field in request.headers where field.name.canonicalName.hasPrefix("x-") || field.name == .contentType
            || field.name == .authorization || field.name == .userAgent
        {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
        }
        let object: [String: Any] = [
            "method": request.method.rawValue, "path": request.uri.path, "query": query, "headers": headers,
            "body": String(buffer: body),
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Helpers

    /// Runs `source` with `base` set to the server's URL; fails on any script error.
    private func run(_ source: String, file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let script = "local http, base = require 'http', \"http://127.0.0.1:\(server.port)\"\n" + source
        let (transcript, outcome) = try await runLua(script, modules: [HTTPModule()])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    // MARK: Requests

    func testGetWithQueryAndHeadersEchoed() async throws {
        let lines = try await run("""
            local resp = assert(http.request {
              url = base .. "/echo?keep=1",
              query = { q = "a b&c", n = 5, list = { "x", "y" }, flag = true },
              headers = { ["X-Token"] = "t1", ["X-Count"] = 3 },
            })
            print(resp.status, resp.headers["content-type"], resp.json.method, resp.json.path)
            local q = resp.json.query
            print(q.keep[1], q.q[1], q.n[1], q.list[1], q.list[2], q.flag[1])
            print(resp.json.headers["x-token"], resp.json.headers["x-count"], resp.json.headers["user-agent"])
            print(type(resp.body), #resp.body > 0)
            """)
        XCTAssertEqual(lines, [
            "200\tapplication/json\tGET\t/echo",
            "1\ta b&c\t5\tx\ty\ttrue",
            "t1\t3\tlookout",
            "string\ttrue",
        ])
    }

    func testPostJSONKeepsInt64Exact() async throws {
        let lines = try await run("""
            local resp = assert(http.post(base .. "/mirror", { json = { n = math.maxinteger, m = math.mininteger, f = 0.1, a = json.empty_array } }))
            print(resp.status, resp.json.n == math.maxinteger, math.type(resp.json.n), resp.json.m == math.mininteger)
            print(resp.body:find("9223372036854775807", 1, true) ~= nil, resp.json.f, json.encode(resp.json.a))
            local echo = assert(http.request { url = base .. "/echo", method = "post", json = { n = math.maxinteger } })
            print(echo.json.method, echo.json.headers["content-type"], echo.json.body)
            local typed = assert(http.post(base .. "/echo", { json = {}, headers = { ["Content-Type"] = "application/vnd.x+json" } }))
            print(typed.json.headers["content-type"], typed.json.body)
            """)
        XCTAssertEqual(lines, [
            "200\ttrue\tinteger\ttrue",
            "true\t0.1\t[]",
            "POST\tapplication/json\t{\"n\":9223372036854775807}",
            "application/vnd.x+json\t{}",
        ])
    }

    func testBodiesAndShorthands() async throws {
        let lines = try await run("""
            local r = assert(http.post(base .. "/echo", "raw \\0 bytes"))
            print(r.json.method, #r.json.body, r.json.headers["content-type"])
            r = assert(http.put(base .. "/echo", { body = { b = "2 3", a = 1 } }))
            print(r.json.method, r.json.body, r.json.headers["content-type"])
            r = assert(http.delete(base .. "/echo", { query = { id = 7 } }))
            print(r.json.method, r.json.query.id[1])
            r = assert(http.get(base .. "/echo", { headers = { ["X-Multi"] = { "a", "b" } } }))
            print(r.json.headers["x-multi"])
            r = assert(http.get(base .. "/repeated"))
            print(r.headers["x-multi"], r.json)
            """)
        XCTAssertEqual(lines, [
            "POST\t11\tnil",
            "PUT\ta=1&b=2%203\tapplication/x-www-form-urlencoded",
            "DELETE\t7",
            "a, b",
            "a, b\tnil",
        ])
    }

    func testNon2xxIsAnAnswer() async throws {
        let lines = try await run("""
            local resp, err = http.get(base .. "/missing")
            print(resp.status, resp.body, resp.json, err)
            resp = assert(http.get(base .. "/bad-json"))
            print(resp.status, resp.json, resp.json_error)
            """)
        XCTAssertEqual(lines, [
            "404\tnope\tnil\tnil",
            "200\tnil\tunexpected character 'o' at byte 2",
        ])
    }

    func testRedirects() async throws {
        let lines = try await run("""
            local r = assert(http.get(base .. "/redirect/3"))
            print(r.status, r.json.query.from[1])
            r = assert(http.get(base .. "/redirect/1", { follow_redirects = false }))
            print(r.status, r.headers.location)
            local resp, err = http.get(base .. "/redirect/6")
            print(resp, err.code, err.retryable, err.message)
            """)
        XCTAssertEqual(lines, [
            "200\tredirect",
            "302\t/echo?from=redirect",
            "nil\tredirect\tfalse\tGET http://127.0.0.1:\(server.port)/redirect/6: more than 5 redirects",
        ])
    }

    // MARK: Failures

    func testTimeout() async throws {
        let lines = try await run("""
            local resp, err = http.request { url = base .. "/slow?token=secret", timeout = 0.2,
              headers = { Authorization = "Bearer hunter2" } }
            print(resp, err.code, err.retryable, err.service, err.message)
            print(tostring(err):find("hunter2", 1, true), tostring(err):find("secret", 1, true))
            """)
        XCTAssertEqual(lines, [
            "nil\ttimeout\ttrue\thttp\tGET http://127.0.0.1:\(server.port)/slow: no complete answer within 200ms",
            "nil\tnil",
        ])
    }

    func testBodyOverMaxSize() async throws {
        let lines = try await run("""
            local resp, err = http.get(base .. "/big", { max_size = 1024 })
            print(resp, err.code, err.retryable, err.message)
            resp, err = http.get(base .. "/stream", { max_size = "4KB" })
            print(resp, err.code, err.message)
            resp = assert(http.get(base .. "/stream", { max_size = "64KB" }))
            print(#resp.body)
            """)
        XCTAssertEqual(lines, [
            "nil\ttoo_large\tfalse\tGET http://127.0.0.1:\(server.port)/big: response body larger than max_size 1 KiB (1024 bytes); raise max_size to accept it",
            "nil\ttoo_large\tGET http://127.0.0.1:\(server.port)/stream: response body larger than max_size 4 KiB (4096 bytes); raise max_size to accept it",
            "65536",
        ])
    }

    func testConnectionRefused() async throws {
        let port = try closedPort()
        let lines = try await run("""
            local resp, err = http.get("http://user:pw@127.0.0.1:\(port)/x?api_secret=s")
            print(resp, err.code, err.retryable, err.message)
            """)
        XCTAssertEqual(lines, ["nil\tnetwork\ttrue\tGET http://127.0.0.1:\(port)/x: cannot connect: connection refused"])
    }

    func testInvalidURL() async throws {
        let lines = try await run("""
            for _, url in ipairs { "ftp://example.org/x", "not a url", "http:///path", "https://user:pw@:80/?t=1" } do
              local resp, err = http.get(url)
              print(resp, err.code, err.retryable, err.message)
            end
            """)
        XCTAssertEqual(lines, [
            "nil\tinvalid_url\tfalse\tinvalid URL \"ftp://example.org/x\": only http and https URLs are supported, not ftp",
            "nil\tinvalid_url\tfalse\tinvalid URL \"not a url\": not a valid absolute URL",
            "nil\tinvalid_url\tfalse\tinvalid URL \"http:///path\": the URL has no host",
            "nil\tinvalid_url\tfalse\tinvalid URL \"https://:80/\": the URL has no host",
        ])
    }

    func testBadArgumentsRaise() async throws {
        let lines = try await run("""
            local function try(f, ...) print(select(2, pcall(f, ...))) end
            try(http.request, 5)
            try(http.request, {})
            try(http.request, { url = base, bogus = 1 })
            try(http.request, { url = base, headers = { Accept = true } })
            try(http.request, { url = base, headers = { ["X-A"] = { "a", {} } } })
            try(http.request, { url = base, headers = { ["bad name"] = "v" } })
            try(http.request, { url = base, headers = { Authorization = "Bearer x\\r\\nInjected: 1" } })
            try(http.request, { url = base, timeout = "soon" })
            try(http.request, { url = base, max_size = -1 })
            try(http.request, { url = base, method = "GE T" })
            try(http.request, { url = base, follow_redirects = "yes" })
            try(http.request, { url = base, body = "x", json = {} })
            try(http.request, { url = base, json = { f = print } })
            try(http.request, { url = base, query = { 1, 2 } })
            try(http.get, 42)
            try(http.get, base, "x")
            try(http.get, base, { url = base })
            try(http.post, base, true)
            """)
        let known = "body, follow_redirects, headers, json, max_size, method, query, timeout, url"
        XCTAssertEqual(lines, [
            "bad argument #1 to 'http.request' (table expected, got number)",
            "bad argument #1 to 'http.request' (opts.url: string expected, got nil)",
            "bad argument #1 to 'http.request' (unknown option 'bogus' (known: \(known)))",
            "bad argument #1 to 'http.request' (opts.headers.Accept: string or number expected, got boolean)",
            "bad argument #1 to 'http.request' (opts.headers[\"X-A\"][2]: string or number expected, got table)",
            "bad argument #1 to 'http.request' (opts.headers[\"bad name\"]: invalid header name)",
            "bad argument #1 to 'http.request' (opts.headers.Authorization: header values cannot contain line breaks or NUL)",
            "bad argument #1 to 'http.request' (opts.timeout: expected a duration above zero: seconds or text such as \"30s\", \"2m\")",
            "bad argument #1 to 'http.request' (opts.max_size: expected a size above zero: bytes or text such as \"512KB\", \"10MB\")",
            "bad argument #1 to 'http.request' (opts.method: invalid method \"GE T\")",
            "bad argument #1 to 'http.request' (opts.follow_redirects: boolean expected, got string)",
            "bad argument #1 to 'http.request' (opts.body and opts.json cannot both be given)",
            "bad argument #1 to 'http.request' (opts.json: cannot encode function at $.f)",
            "bad argument #1 to 'http.request' (opts.query: expected a table of names and values, not a list)",
            "bad argument #1 to 'http.get' (string expected, got number)",
            "bad argument #2 to 'http.get' (table expected, got string)",
            "bad argument #2 to 'http.get' (unknown option 'url' (known: body, follow_redirects, headers, json, max_size, query, timeout))",
            "bad argument #2 to 'http.post' (string or table expected, got boolean)",
        ])
    }

    // MARK: Concurrency

    func testFiftyConcurrentRequestsFromFiftyTasks() async throws {
        let lines = try await run("""
            local handles = {}
            for i = 1, 50 do
              handles[i] = task.spawn(function()
                local resp = assert(http.get(base .. "/echo", { query = { i = i } }))
                return tonumber(resp.json.query.i[1])
              end)
            end
            local sum, ok = 0, 0
            for i = 1, 50 do
              local _, n = assert(task.wait(handles[i]))
              if n == i then ok = ok + 1 end
              sum = sum + n
            end
            print(ok, sum)
            """)
        XCTAssertEqual(lines, ["50\t1275"])
    }

    func testCancellingATaskCancelsItsRequest() async throws {
        let lines = try await run("""
            local t = task.spawn(function() return http.get(base .. "/slow") end)
            task.yield()  -- t sends the request and waits for the answer
            t:cancel()
            print(t:status())
            """)
        XCTAssertEqual(lines, ["cancelled"])
    }

    /// A port nothing listens on: bound, then closed.
    private func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Text as a Lua long string literal.
func luaLongString(_ text: String) -> String {
    var level = ""
    while text.contains("]\(level)]") { level += "=" }
    return "[\(level)[\n\(text)]\(level)]"
}

/// The gate of the test that is running.
final class GateHolder: Sendable {
    private let gate = Locked(HTTPTestGate())
    /// The current gate.
    var current: HTTPTestGate { gate.withLock { $0 } }
    /// Replaces the gate (at the start of each test).
    func set(_ new: HTTPTestGate) { gate.withLock { $0 = new } }
}

/// Holds handlers until the test ends (no sleeps: the handler waits for `open()`).
final class HTTPTestGate: Sendable {
    private let state = Locked<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Waits until `open()` (returns at once afterwards).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.open { return true }
                s.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Releases every waiting handler, now and later.
    func open() {
        let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.open = true
            defer { s.waiting = [] }
            return s.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

