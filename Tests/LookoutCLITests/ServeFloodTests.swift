import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 24 §2: one script that keeps thousands of HTTP requests open against a server that never
/// answers, beside a healthy `schedule.every` script, under the real `lookout serve` (in one
/// process and with `--isolate`). The healthy script keeps its period, `/status` answers, the
/// process stays under a stated memory ceiling, and SIGTERM ends within the drain + 1 s.
final class ServeFloodTests: CLITestCase, @unchecked Sendable {
    /// Requests the flood script starts at once.
    static let floodRequests = 20_000
    /// The most resident memory `serve` (and each worker) may use meanwhile. Before the in-flight
    /// limit the flood grew the process past 300 MB within seconds (1.1 GB given time).
    static let memoryCeiling = 256 << 20
    /// The drain given to `serve`.
    static let drainSeconds = 2.0
    /// Ticks of the healthy script watched while the flood runs.
    static let ticksWatched = 12

    func testFloodBesideAHealthyScriptInOneProcess() throws { try floodBesideHealthy(isolate: false) }

    func testFloodBesideAHealthyScriptWithIsolate() throws { try floodBesideHealthy(isolate: true) }

    private func floodBesideHealthy(isolate: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        let server = try SilentTCPServer()
        defer { server.stop() }
        try writeFile("Scripts/healthy.lua", """
            local script = require "script"
            require("schedule").every(1, function()
              print(string.format("tick %.3f", script.uptime()))
            end, { name = "tick" })
            """)
        // Every task asks again at once when a request ends (4 s timeout), for 45 s at most; a
        // refusal by the in-flight limit waits a little before the next try.
        try writeFile("Scripts/flood.lua", """
            local http = require "http"
            local script = require "script"
            local started, refused = 0, 0
            for i = 1, \(Self.floodRequests) do
              task.spawn(function()
                while script.uptime() < 45 do
                  local r, err = http.get("\(server.baseURL)/hold/" .. i, { timeout = 4 })
                  if err and err.code == "limit" then refused = refused + 1; sleep(0.5) end
                end
              end)
              started = started + 1
            end
            print("flood started " .. started)
            """)
        let port = try freePort()
        let serve = try launch(
            ["serve", "--status-port", String(port), "--drain", "2s"] + (isolate ? ["--isolate"] : []))
        XCTAssertTrue(serve.waitForOutput(containing: "[flood.lua] flood started \(Self.floodRequests)", timeout: 30),
                      file: file, line: line)
        let floodStarted = Date()
        var mark = serve.outputCount
        var peak = 0
        var slowStatus: [String] = []
        for _ in 0..<Self.ticksWatched {
            guard serve.waitForOutput(after: mark, timeout: 10, "the next tick", file: file, line: line, until: {
                $0.contains("[healthy.lua] tick ")
            }) else { break }
            mark = serve.outputCount
            let asked = Date().timeIntervalSince(floodStarted)
            if Self.getStatus(port: port, timeout: 3) == nil {
                slowStatus.append(String(format: "no answer within 3 s (asked %.1f s after the flood started)", asked))
            }
            peak = max(peak, Self.residentBytes(tree: serve.pid, isolate: isolate))
        }
        XCTAssertTrue(slowStatus.isEmpty, "GET /status: \(slowStatus)", file: file, line: line)
        XCTAssertGreaterThan(server.accepted, 0, "the flood reached the silent server", file: file, line: line)

        // The healthy script kept its period: the times it recorded are about 1 s apart.
        let ticks = serve.output().split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("[healthy.lua] tick ") else { return nil }
            return Double(line.dropFirst("[healthy.lua] tick ".count))
        }
        XCTAssertGreaterThanOrEqual(ticks.count, Self.ticksWatched, file: file, line: line)
        let gaps = zip(ticks.dropFirst(), ticks).map { $0 - $1 }
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 2.0, "gaps between ticks: \(gaps)", file: file, line: line)
        XCTAssertLessThan(peak, Self.memoryCeiling,
                          "resident memory \(peak >> 20) MB over the ceiling of \(Self.memoryCeiling >> 20) MB",
                          file: file, line: line)

        // SIGTERM while the flood has requests in flight: done within the drain + 1 s.
        let signalled = Date()
        serve.send(signal: SIGTERM)
        let result = serve.waitForExit(timeout: 60, file: file, line: line)
        let took = Date().timeIntervalSince(signalled)
        XCTAssertLessThanOrEqual(took, Self.drainSeconds + 1, "SIGTERM took \(took) s", file: file, line: line)
        if let result { assertExit(result, 0, file: file, line: line) }
    }

    /// `--requests-in-flight 1`: one request runs, eight wait for the slot (and each still gets
    /// its whole timeout once it starts), the rest are refused at once with `err.code == "limit"`.
    func testRequestsBeyondTheLimitWaitAndPastTheQueueAreRefused() throws {
        let server = try SilentTCPServer()
        defer { server.stop() }
        let result = try lookout(["run", "--requests-in-flight", "1", "-e", """
            local http = require "http"
            local codes, refusal, handles = {}, nil, {}
            for i = 1, 12 do
              handles[i] = task.spawn(function()
                local r, err = http.get("\(server.baseURL)/hold/" .. i, { timeout = 0.3 })
                codes[err and err.code or "answer"] = (codes[err and err.code or "answer"] or 0) + 1
                if err and err.code == "limit" then refusal = err.message end
              end)
            end
            for _, t in ipairs(handles) do task.wait(t) end
            print(codes.timeout, codes.limit, codes.answer)
            print(refusal)
            """])
        assertExit(result, 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "9\t3\tnil", result.stdout)
        XCTAssertTrue(lines.last?.contains("too many requests in flight (1 running and 8 waiting") == true, result.stdout)
        XCTAssertTrue(lines.last?.contains("--requests-in-flight") == true, result.stdout)
    }

    /// `GET /status` on 127.0.0.1:`port`: the status code, or nil when no whole answer head came
    /// within `timeout` seconds.
    static func getStatus(port: Int, timeout: Double) -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - floor(timeout)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return nil }
        let request = Array("GET /status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return nil }
        let deadline = Date(timeIntervalSinceNow: timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
            let text = String(decoding: received, as: UTF8.self)
            if text.contains("\r\n\r\n") {
                return text.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            }
        }
        return nil
    }

    /// Resident bytes of `pid` (`VmRSS`), with `isolate` the largest of it and its children's.
    static func residentBytes(tree pid: pid_t, isolate: Bool) -> Int {
        var pids = [pid]
        if isolate {
            // Children are listed under the thread that started them.
            for thread in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
                let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? ""
                pids += children.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            }
        }
        return pids.map(residentBytes(pid:)).max() ?? 0
    }

    /// `VmRSS` of `pid` in bytes (0 when it is gone).
    static func residentBytes(pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.dropFirst("VmRSS:".count).split(separator: " ").first.flatMap { Int($0) } ?? 0) * 1024
        }
        return 0
    }
}
